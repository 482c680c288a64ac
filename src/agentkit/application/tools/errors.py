"""The error a tool raises to tell the model what went wrong."""


class ToolError(Exception):
    """Raise it from a tool with a message the model can act on.

    Any exception a tool raises becomes an error result for the model; this one is the
    polite way: its message is passed on as it is, without the exception's class name.
    """
