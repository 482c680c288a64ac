"""The plug-in example (examples/provider_plugin, a provider package of its own) passes the conformance suite.

Its own test module runs here as it would in its repository: its package goes on the path, the
module is loaded from its file, and pytest collects the suite's class from this module.
"""

import importlib.util
import sys
from pathlib import Path

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "provider_plugin"
if str(PLUGIN / "src") not in sys.path:
    sys.path.insert(0, str(PLUGIN / "src"))

_spec = importlib.util.spec_from_file_location("agentkit_acme_conformance", PLUGIN / "tests" / "test_conformance.py")
assert _spec is not None
assert _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

TestAcmeConformance = _module.TestAcmeConformance
