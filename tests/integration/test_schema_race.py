"""Many threads opening the store at once on a fresh PostgreSQL schema: every one gets a
working store (PostgreSQL refuses concurrent catalog updates unless they are serialised)."""

from __future__ import annotations

import threading

from infra.services.tables import TableService


def test_services_opened_at_once_on_a_fresh_schema_all_work(postgres_url: str) -> None:
    errors: list[BaseException] = []
    services: list[TableService] = []

    def open_one() -> None:
        try:
            service = TableService(url=postgres_url)
            assert service.vault is not None  # the vault creates its table on first use
            services.append(service)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "schema creation deadlocked"
    assert errors == []
    assert len(services) == 6
