"""Fixtures of the command-line tests: ``hudi-ray`` run in-process through
``main(argv)``, its output captured."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from hudi_ray.cli import main


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        assert self.code == 0, self.err
        return json.loads(self.out)

    def json_lines(self) -> list[dict[str, Any]]:
        assert self.code == 0, self.err
        return [json.loads(line) for line in self.out.splitlines()]


CliRunner = Callable[..., Run]


@pytest.fixture
def cli() -> CliRunner:
    """``cli("info", path, tty=False)``: the exit code and what was printed;
    ``tty`` says whether stdout and stderr count as terminals."""

    def run(*argv: str, tty: bool = False) -> Run:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(argv), stdout=out, stderr=err, is_tty=lambda _stream: tty)
        return Run(code, out.getvalue(), err.getvalue())

    return run
