"""`sabot serve`'s listening socket: the connections it accepts send each write at once
(Nagle's algorithm off), so an answer's body does not wait for the ACK of its headers."""

from __future__ import annotations

import asyncio
import socket

from api.commands.serve import listen


async def accepted_nodelay() -> int:
    """TCP_NODELAY of a connection accepted by asyncio (as uvicorn serves) on `listen`'s."""
    loop = asyncio.get_running_loop()
    listening = listen("127.0.0.1", 0)
    accepted: asyncio.Future[int] = loop.create_future()

    class Accepting(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted.set_result(transport.get_extra_info("socket").getsockopt(
                socket.IPPROTO_TCP, socket.TCP_NODELAY))

    server = await loop.create_server(Accepting, sock=listening)
    async with server:
        _, writer = await asyncio.open_connection(*listening.getsockname())
        try:
            return await asyncio.wait_for(accepted, 10)
        finally:
            writer.close()


def test_the_connections_served_send_without_waiting_for_acks() -> None:
    assert asyncio.run(accepted_nodelay()) != 0
