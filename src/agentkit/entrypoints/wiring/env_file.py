"""The `.env` file: settings a developer keeps beside the project, read when `agentkit` starts.

The console script loads it into the process environment before the settings are read. Variables
already set in the environment win over the file, so a deployment's (or a shell's) value is never
overridden by a file left in the folder. The file is `.env` in the working directory, or the one
`AGENTKIT_ENV_FILE` names; a missing file is no error. Parsing is python-dotenv's: `KEY=value`
lines, `#` comments, quotes, `export KEY=value`, and `${OTHER}` references.
"""

import os
from collections.abc import MutableMapping
from pathlib import Path

ENV_FILE_VARIABLE = "AGENTKIT_ENV_FILE"
DEFAULT_ENV_FILE = ".env"


def env_file_path(environ: MutableMapping[str, str]) -> Path:
    """The file to read: AGENTKIT_ENV_FILE when set, else `.env` in the working directory."""
    return Path(environ.get(ENV_FILE_VARIABLE) or DEFAULT_ENV_FILE)


def load_env_file(environ: MutableMapping[str, str] | None = None) -> Path | None:
    """Add the file's variables to `environ` (the process environment) where they are not set yet.

    Returns:
        The file read, or None when there is none.
    """
    target = os.environ if environ is None else environ
    path = env_file_path(target)
    if not path.is_file():
        return None
    from dotenv import dotenv_values  # only when there is a file to read

    for name, value in dotenv_values(path, interpolate=True).items():
        if value is not None and name not in target:  # `KEY` alone (no `=`) sets nothing
            target[name] = value
    return path
