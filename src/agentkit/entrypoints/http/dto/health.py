"""GET /health: liveness and each dependency's state."""

from typing import Literal

import msgspec


class HealthView(msgspec.Struct, kw_only=True):
    """Liveness and each dependency's state."""

    status: Literal["ok", "degraded"]
    checks: dict[str, str]
