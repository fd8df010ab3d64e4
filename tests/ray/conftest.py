"""The Ray tests run on the session's local Ray instance (``ray_session`` in
``tests/conftest.py``); without Ray installed the folder is not collected."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("ray") else ["test_*.py"]
