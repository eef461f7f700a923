"""ctest entry for the pytest server suites: `run_suite.py TEST_FILE [pytest args...]`.

Exits 77 (ctest: skipped, never passed) when the Python test tools are missing; scripts/setup.sh
installs them from tests/requirements.txt.
"""

import os
import sys

try:
    import openai  # noqa: F401
    import pytest
except ImportError as error:
    print(f"skipped: {error} (run scripts/setup.sh to install tests/requirements.txt)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
if not args:
    args = [here]
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", here, *args]))
