"""The GAME article's typed hidden context: a tool that needs a database URL and an API key it never shows the model.

Importable by name (AGENTKIT_TOOL_MODULES=tests.context_tools): the module offers the tool and the
context provider that supplies its ActionContext.
"""

import hashlib

from agentkit import ToolContext, context_provider, extend, tool

PAPERS_DATABASE_URL = "postgresql://papers@127.0.0.1:5432/papers"
PAPERS_API_KEY = "papers-secret-key"


class ActionContext(ToolContext, frozen=True, kw_only=True):
    """What save_paper needs from outside the conversation."""

    database_url: str
    api_key: str


@context_provider
def action_context(base: ToolContext) -> ActionContext:
    """Supply every ActionContext from this module's configuration."""
    return extend(base, ActionContext, database_url=PAPERS_DATABASE_URL, api_key=PAPERS_API_KEY)


@tool
def save_paper(title: str, content: str, action_context: ActionContext) -> str:
    """Save a paper.

    Args:
        title: The paper's title.
        content: Its text.
    """
    key_tag = hashlib.sha256(action_context.api_key.encode()).hexdigest()[:8]
    where = action_context.database_url
    return f"saved {title!r} ({len(content)} chars) to {where} for run {action_context.run_id} with key #{key_tag}"
