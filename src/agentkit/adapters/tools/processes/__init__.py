"""Tool sandboxes: sync tools in worker processes that can be killed (the ToolSandbox port).

`ProcessToolSandbox` keeps a pool of worker processes (`worker.py`, started by path with the
standard library only); each runs one call at a time under its own CPU and memory limits, without
the service's environment, and is killed at the call's time limit or when the call is cancelled.
"""

from agentkit.adapters.tools.processes.pool import ProcessPoolConfig, ProcessToolSandbox

__all__ = ["ProcessPoolConfig", "ProcessToolSandbox"]
