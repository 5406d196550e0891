# Under libfaketime (the shifted-clock runs of .ci/run), time.sleep may be broken: it is mended here,
# before any module of syndicator binds it, and in every Python process a test starts
# (tests/clockshim/sitecustomize.py says why).
import os as _os
from pathlib import Path as _Path

from .clockshim import sitecustomize as _clockshim

if _clockshim.apply():
    _os.environ["PYTHONPATH"] = _os.pathsep.join(
        [str(_Path(_clockshim.__file__).parent), *filter(None, [_os.environ.get("PYTHONPATH")])]
    )
