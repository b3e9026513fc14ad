# lit configuration for Purity: FileCheck tests of passes (.mlir) and of the
# importer and tools (.py scripts run with %PYTHON).
import os
import sys

import lit.formats

config.name = "Purity"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "python", "e2e", "conformance", "Inputs"]

# Tools (purity-opt, purity, filecheck) live next to the interpreter lit runs under.
tools_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("%PYTHON", sys.executable))
for variable in ("HOME", "TMPDIR"):
    if variable in os.environ:
        config.environment[variable] = os.environ[variable]
