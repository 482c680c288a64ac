"""Typed identifiers, so a run id is never passed where an owner id belongs."""

from typing import NewType

RunId = NewType("RunId", str)
OwnerId = NewType("OwnerId", str)
SessionId = NewType("SessionId", str)
ToolCallId = NewType("ToolCallId", str)
