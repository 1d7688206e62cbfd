"""The production deployment (Dockerfile, compose.yaml) without a container
engine: every command the compose file runs is one the CLI parses, the image runs as a user,
and the same topology runs here as processes (two API replicas, the workers, the director,
the scheduler) on the local PostgreSQL and Redis, each replica serving what the other
recorded and seeing every worker alive."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from api.cli import build_parser
from api.tokens import Grant, Role, TokenStore
from infra.services.tables import TableService
from tests.client import CLIENT

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose.yaml"
DOCKERFILE = ROOT / "Dockerfile"
KEY = bytes(range(32)).hex()


def sabot_services() -> dict[str, dict[str, Any]]:
    services: dict[str, dict[str, Any]] = yaml.safe_load(COMPOSE.read_text())["services"]
    return {name: s for name, s in services.items() if s.get("image") == "sabot"}


def image_home() -> str:
    """The image's working directory: where each process keeps `.sabot/`."""
    return [line.split()[1] for line in DOCKERFILE.read_text().splitlines()
            if line.startswith("WORKDIR")][-1]


def mounts(service: dict[str, Any]) -> dict[str, str]:
    """The named volumes a service mounts in its working directory: path there -> volume."""
    home = image_home() + "/"
    return {target.removeprefix(home): name for name, target, *_ in
            (volume.split(":") for volume in service.get("volumes", []))
            if target.startswith(home)}


def test_every_compose_command_is_one_the_cli_parses() -> None:
    services = sabot_services()
    assert {"api-1", "api-2", "workers", "director", "beat"} <= set(services)
    for name, service in services.items():
        args = build_parser().parse_args(service["command"])
        assert callable(args.handler), name
        assert service["environment"]["SABOT_DATABASE_URL"].startswith("postgresql://")
    assert build_parser().parse_args(services["beat"]["command"]).beat
    assert not build_parser().parse_args(services["workers"]["command"]).director
    assert build_parser().parse_args(services["director"]["command"]).director


def test_every_writer_shares_one_signing_key_and_checkpoint_file() -> None:
    """Without `SABOT_SIGNING_KEY`, each container would sign with a key of its own, in its
    own `.sabot/`, and verify would report the others' as untrusted: they share one volume."""
    volumes = {name: mounts(service) for name, service in sabot_services().items()}
    assert all(v == {".sabot": "sabot"} for v in volumes.values()), volumes
    assert "sabot" in yaml.safe_load(COMPOSE.read_text())["volumes"]


def test_the_image_runs_as_a_user_for_every_role() -> None:
    lines = [line.split(None, 1) for line in DOCKERFILE.read_text().splitlines()
             if line and not line.startswith("#") and not line.startswith(" ")]
    user = [rest for word, *rest in lines if word == "USER"]
    assert user and user[-1] != ["root"]
    entry = next(rest[0] for word, *rest in lines if word == "ENTRYPOINT")
    assert yaml.safe_load(entry) == ["sabot"]
    default = yaml.safe_load(next(rest[0] for word, *rest in lines if word == "CMD"))
    assert callable(build_parser().parse_args(default).handler)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def compose_commands(queue: str, ports: list[int]) -> dict[str, list[str]]:
    """Each compose service's command, on `queue`, the API replicas on 127.0.0.1:`ports`."""
    commands = {}
    for name, service in sabot_services().items():
        command = [queue if part == "sabot" and n and service["command"][n - 1] == "--queue"
                   else part for n, part in enumerate(service["command"])]
        if name.startswith("api-"):
            command[command.index("--port") + 1] = str(ports[int(name[-1]) - 1])
            command[command.index("--host") + 1] = "127.0.0.1"
        commands[name] = command
    return commands


@pytest.fixture
def topology(postgres_url: str, redis_url: str, tmp_path: Path) -> Iterator[list[str]]:
    """The compose services as processes, with the compose commands (the URLs aside)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SABOT_DATABASE_URL": postgres_url,
           "SABOT_BROKER_URL": redis_url, "SABOT_SECRET_KEY": KEY, "SABOT_LOG_JSON": "true"}
    ports = [free_port(), free_port()]
    commands = compose_commands(f"deploy-{uuid.uuid4().hex[:8]}", ports).values()
    logs = [(tmp_path / f"{n}.log").open("w") for n in range(len(commands))]
    processes = [subprocess.Popen([sys.executable, "-m", "api.cli", *c], cwd=tmp_path,
                                  env=env, stdout=subprocess.DEVNULL, stderr=log)
                 for c, log in zip(commands, logs, strict=True)]
    try:
        yield [f"http://127.0.0.1:{p}" for p in ports]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        for log in logs:  # the children hold their own copies; ours were left to the GC
            log.close()


def test_the_compose_topology_as_processes(topology: list[str], postgres_url: str) -> None:
    with TableService(url=postgres_url, secret_key=bytes.fromhex(KEY)) as service:
        token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER))
    headers = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + 60
    while True:
        try:
            ready = [CLIENT.get(f"{url}/ready", timeout=3).json() for url in topology]
            if all(r.get("workers", {}).get("alive", 0) >= 3 for r in ready):
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the replicas never saw three workers alive"
        time.sleep(0.5)
    assert all(r["status"] == "ready" for r in ready), ready
    opened = CLIENT.post(f"{topology[0]}/tables", headers=headers, timeout=10,
                         json={"name": "deployed", "variant": "punto-banco"})
    assert opened.status_code == 201, opened.text
    seated = CLIENT.post(f"{topology[1]}/tables/deployed/commands", headers=headers, timeout=10,
                         json={"kind": "seat", "player": "ann", "chips": 100,
                               "command_id": "seat-ann"})
    assert seated.status_code == 200, seated.text
    seen = CLIENT.get(f"{topology[0]}/tables/deployed", timeout=10).json()
    assert [s["player"] for s in seen["seats"]] == ["ann"]
