"""A whole response cut into the fragments a streaming model would send, for the scripted and demo models.

The text goes word by word (each word with the white space after it), each call's arguments JSON
in pieces of a few characters, the call's id and name on its first piece; so the fragments
concatenate to the text and to each call's arguments, as a real provider's do. A call whose
arguments could not be parsed streams `{}`, what its `arguments` hold.
"""

import re
from collections.abc import Iterator

import msgspec

from agentkit.domain.messages import LLMDelta, LLMResponse, TextDelta, ToolCallDelta

# About the size of a token or two: enough pieces that a consumer meets a call in several.
ARGUMENT_PIECE_CHARS = 8
_WORDS = re.compile(r"\s*\S+\s*|\s+")


def fragments(response: LLMResponse) -> Iterator[LLMDelta]:
    """The response's text word by word, then each call's arguments in pieces, in order."""
    for word in _WORDS.findall(response.text):
        yield TextDelta(text=word)
    for index, call in enumerate(response.tool_calls):
        arguments = msgspec.json.encode(call.arguments).decode()
        pieces = [arguments[at : at + ARGUMENT_PIECE_CHARS] for at in range(0, len(arguments), ARGUMENT_PIECE_CHARS)]
        yield ToolCallDelta(index=index, id=call.id, name=call.name, arguments=pieces[0])
        for piece in pieces[1:]:
            yield ToolCallDelta(index=index, arguments=piece)
