"""The ``hudi-ray`` command line: look at a Hudi table from the shell.

``hudi-ray info | timeline | slices | explain | stats | read <table-uri>``, also
run as ``python -m hudi_ray``. ``main(argv)`` returns the exit code: 0, 2 for
bad input (an unreadable URI, a bad filter, an unknown column), 1 otherwise.
"""

from hudi_ray.cli.main import main

__all__ = ["main"]
