"""Re-run a script in a virtual environment of its own that has the module it needs: the Python
helpers of the tests and benchmarks (pyarrow, warcio, datasketch) each make theirs on first
use, so nothing is installed into the system's Python."""
import os
import subprocess
import sys


def ensure(venv, module, requirement):
    """Return when `module` imports; else make `venv` (with `pip install requirement`) if
    needed and re-run this script under its Python."""
    try:
        __import__(module)
        return
    except ImportError:
        pass
    vpy = os.path.join(venv, "bin", "python")
    if os.path.abspath(sys.executable) == os.path.abspath(vpy):
        sys.exit(f"{module} is not importable in {venv}")
    if not os.path.exists(vpy):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
    if subprocess.call([vpy, "-c", f"import {module}"], stderr=subprocess.DEVNULL) != 0:
        subprocess.check_call([vpy, "-m", "pip", "install", "-q", requirement])
    os.execv(vpy, [vpy] + sys.argv)
