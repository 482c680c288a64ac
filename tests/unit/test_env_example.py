"""`.env.example` lists every setting AgentKit reads, with its real default."""

import re
from pathlib import Path

import msgspec
import pytest

from agentkit.entrypoints.wiring.settings import Settings

# every variable of every section of the settings
FIELDS = [
    field
    for section in msgspec.structs.fields(Settings)
    if isinstance(section.type, type)
    for field in msgspec.structs.fields(section.type)
]

ENV_EXAMPLE = Path(__file__).parents[2] / ".env.example"
LINE = re.compile(r"^# ([A-Z][A-Z0-9_]*)=(\S*)", re.MULTILINE)


def documented() -> dict[str, str]:
    return dict(LINE.findall(ENV_EXAMPLE.read_text()))


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.encode_name)
def test_every_setting_is_listed_with_its_default(field: msgspec.structs.FieldInfo) -> None:
    listed = documented()
    assert field.encode_name in listed, f"{field.encode_name} is missing from .env.example"
    default = field.default
    if default is None or default == () or field.encode_name in {"LLM_SCRIPT", "DATABASE_URL", "REDIS_URL"}:
        return
    shown = listed[field.encode_name]
    if isinstance(default, float) and shown:
        assert float(shown) == default, field.encode_name
    else:
        assert shown == str(default), field.encode_name


def test_nothing_unknown_is_listed() -> None:
    known = {field.encode_name for field in FIELDS}
    assert set(documented()) - known == set()
