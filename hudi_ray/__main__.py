"""``python -m hudi_ray``: the ``hudi-ray`` command line."""

from hudi_ray.cli import main

raise SystemExit(main())
