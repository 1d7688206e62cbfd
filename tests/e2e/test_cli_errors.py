"""Failures of the command line as a user meets them, in real processes: each is one line on
standard error naming the service and its URL (never the password), with exit 2 for a
service or usage error, 1 for a refusal, within the connect timeout, and no traceback
unless `--debug` asks for it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from api.cli import main
from tests.conftest import POSTGRES_URL, need_server

SABOT = [sys.executable, "-m", "api.cli"]
CONNECT_TIMEOUT = 3


def sabot(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str, float]:
    started = time.monotonic()
    done = subprocess.run([*SABOT, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SABOT_CONNECT_TIMEOUT": str(CONNECT_TIMEOUT),
                               **(env or {})})
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("command", [
    ["play", "--coups", "1"], ["projections", "status"], ["token", "create", "--role", "auditor"],
    ["serve"], ["worker"],
])
def test_an_unreachable_postgresql_is_one_line_naming_it(command: list[str]) -> None:
    url = f"postgresql://postgres:hunter2@127.0.0.1:{closed_port()}/test"
    code, _, err, seconds = sabot(*command, "--database", url)
    line = one_line(err)
    assert code == 2 and "cannot open postgresql://postgres:***@127.0.0.1" in line
    assert "(PostgreSQL)" in line, line
    assert "hunter2" not in err and "refused" in line
    assert seconds < CONNECT_TIMEOUT + 10  # imports, then at most the connect timeout


def test_a_wrong_database_url_is_one_line() -> None:
    need_server("PostgreSQL", "127.0.0.1", 5432)
    missing = POSTGRES_URL.rsplit("/", 1)[0] + f"/no_{uuid.uuid4().hex[:8]}"
    code, _, err, _ = sabot("play", "--coups", "1", "--database", missing)
    assert code == 2 and "does not exist" in one_line(err)
    code, _, err, _ = sabot("play", "--database", "mysql://root:pw@db/x")
    assert code == 2 and "unsupported database URL" in one_line(err) and "pw" not in err


@pytest.mark.parametrize("command", [["serve"], ["worker"]])
def test_an_unreachable_redis_is_one_line_naming_it(command: list[str], tmp_path: str) -> None:
    need_server("PostgreSQL", "127.0.0.1", 5432)
    code, _, err, _ = sabot(*command, "--database", POSTGRES_URL, "--broker",
                            f"redis://:s3cret@127.0.0.1:{closed_port()}/0")
    line = one_line(err)
    assert code == 2 and "redis://:***@127.0.0.1" in line
    assert "(Redis)" in line and "s3cret" not in err


def test_bad_and_busy_ports() -> None:
    need_server("PostgreSQL", "127.0.0.1", 5432)
    code, _, err, _ = sabot("serve", "--port", "99999")
    assert code == 2 and "is not a port" in err and "Traceback" not in err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err, _ = sabot("serve", "--port", str(port), "--database", POSTGRES_URL)
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in one_line(err)


def test_debug_shows_the_traceback() -> None:
    code, _, err, _ = sabot("--debug", "play", "--database", "mysql://x")
    assert code != 0 and "Traceback" in err


def test_a_closed_pipe_is_quiet(tmp_path: str) -> None:
    child = subprocess.Popen([*SABOT, "odds", "punto-banco", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=60) == 141 and err == "", err


def test_a_command_that_administers_a_store_makes_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Run from another folder, `sabot token create` made a new store and signing key, whose
    token the server then answered 401: a command that only reads or administers a store
    refuses to make one, naming what to pass."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SABOT_DATABASE_URL", raising=False)
    for argv in (["token", "create", "--role", "organiser"], ["token", "list"],
                 ["tournament", "list"], ["tournament", "resume", "friday"]):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert "no store here" in err and "--database" in err, (argv, err)
    assert not (tmp_path / ".sabot").exists()
