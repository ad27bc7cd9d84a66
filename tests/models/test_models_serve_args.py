"""``evalcore serve-local`` refuses a bad or taken port before loading the model (exit 2)."""

from __future__ import annotations

import socket

import pytest

from evalcore.cli import main
from evalcore.errors import EvalcoreError
from evalcore.models._server import check_port, free_port


@pytest.fixture(autouse=True)
def _never_exec(monkeypatch) -> None:
    # were the check missing, serve-local would exec the server in place of pytest
    def refuse(*args: object) -> None:
        raise AssertionError(f"serve-local would have started the server: {args}")

    monkeypatch.setattr("evalcore.models._server.os.execv", refuse)


@pytest.mark.parametrize("port", [0, -1, 70000])
def test_port_out_of_range_exits_2(port, capsys) -> None:
    assert main(["serve-local", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert "--port" in err and "1-65535" in err and len(err.strip().splitlines()) == 1


def test_taken_port_exits_2_naming_it(capsys) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["serve-local", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port}" in err and "--port" in err


def test_free_port_passes_and_bad_host_is_named() -> None:
    check_port(free_port())  # no error
    with pytest.raises(EvalcoreError) as info:
        check_port(free_port(), host="nonexistent.invalid")
    assert info.value.field == "--host"
