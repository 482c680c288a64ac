"""Webhooks: from a run's terminal save to a verified webhook at a receiver, next to a raw signed POST.

A receiver on 127.0.0.1 (raw asyncio HTTP/1.1) verifies each request with `standardwebhooks` and
notes when it arrived. One event at a time, SAMPLES times:

- `pipeline`: t0 just before the notifier hears of the stored run (what the run repository's
  observer does after a run's final save); the delivery is stored in the outbox, the sender is rung,
  claims it, signs it, checks the URL and POSTs it over a fresh connection. Run on the in-memory
  outbox and on PostgreSQL's (DATABASE_URL, default the local server, in a scratch database).
- `raw`: the same signed POST by hand (sign with standardwebhooks, a fresh httpx connection with a
  shared TLS context, as the transport makes), the floor the pipeline is held to.

Also the cost on the run's path: how long `notifier.on_run` itself takes (it renders the payload and
schedules the store; it never waits for it).

Run: `.venv/bin/python bench/webhook_delivery.py [--samples N]` (a few seconds).
"""

import argparse
import asyncio
import base64
import os
import secrets
import statistics
import time
import uuid
from datetime import UTC, datetime

import httpx
import msgspec
from standardwebhooks import Webhook

from agentkit.adapters.memory import InMemoryWebhookOutbox
from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    SqlaRunRepository,
    create_database,
    create_engine,
    drop_database,
    parse_database_url,
)
from agentkit.adapters.postgres.webhooks import SqlaWebhookOutbox
from agentkit.adapters.system import SystemClock
from agentkit.adapters.webhooks import HttpWebhookTransport, WebhookSender, WebhookURLGuard, signer
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.webhook_outbox import WebhookOutbox
from agentkit.application.webhooks import DeliverWebhooks, DeliveryBell, WebhookNotifier, delivery_id
from agentkit.domain import run as runs
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run
from agentkit.domain.webhooks import RetryPolicy

SECRET = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


class Receiver:
    """Answers 200 to every POST; `arrived` resolves with the time a verified request for an id arrived."""

    def __init__(self) -> None:
        self.webhook = Webhook(SECRET)
        self.waiting: dict[str, asyncio.Future[float]] = {}
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        headers = {}
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if value:
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.webhook.verify(body, headers)
        arrived = time.perf_counter()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()
        future = self.waiting.pop(headers["webhook-id"], None)
        if future is not None and not future.done():
            future.set_result(arrived)

    def expect(self, webhook_id: str) -> "asyncio.Future[float]":
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiting[webhook_id] = future
        return future

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"


def ended_run(url: str) -> Run:
    now = datetime.now(UTC)
    run = Run(id=RunId(str(uuid.uuid4())), owner=OwnerId("bench"), goal="g", created_at=now, callback_url=url)
    return runs.succeed(runs.start(run, now=now, lease_until=now), now=now, answer="42")


def payload(run: Run) -> object:
    return msgspec.to_builtins(run)  # the service renders the API's view; a Struct of similar size here


async def pipeline(
    receiver: Receiver, outbox: WebhookOutbox, stored: RunRepository | None, samples: int
) -> dict[str, list[float]]:
    clock = SystemClock()
    bell = DeliveryBell()
    notifier = WebhookNotifier(outbox=outbox, clock=clock, render=payload, bell=bell)
    transport = HttpWebhookTransport(guard=WebhookURLGuard(allow_loopback=True), signer=signer(SECRET), timeout_s=10)
    deliver = DeliverWebhooks(outbox=outbox, transport=transport, clock=clock, policy=RetryPolicy(), hold_s=40)
    sender = WebhookSender(deliver=deliver, notifier=notifier, bell=bell, clock=clock, poll_s=1.0)
    await sender.start()
    latencies: list[float] = []
    on_run: list[float] = []
    try:
        for _ in range(samples):
            run = ended_run(receiver.url)
            if stored is not None:
                await stored.add(run)  # the delivery's run (a foreign key in PostgreSQL)
            arrived = receiver.expect(delivery_id(run))
            t0 = time.perf_counter()
            notifier.on_run(run)
            on_run.append(time.perf_counter() - t0)
            latencies.append(await asyncio.wait_for(arrived, 30) - t0)
            await asyncio.sleep(0.02)  # the attempt's outcome is stored before the next event: one at a time
    finally:
        await sender.stop()
    return {"latency": latencies, "on_run": on_run}


async def raw(receiver: Receiver, samples: int) -> list[float]:
    webhook = Webhook(SECRET)
    tls = httpx.create_ssl_context()  # as the transport does: one TLS context, a fresh connection per POST
    latencies = []
    for _ in range(samples):
        body = msgspec.json.encode({"type": "run.succeeded", "data": payload(ended_run(receiver.url))}).decode()
        webhook_id = f"msg_{uuid.uuid4().hex}"
        arrived = receiver.expect(webhook_id)
        t0 = time.perf_counter()
        now = datetime.now(UTC)
        headers = {
            "webhook-id": webhook_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": webhook.sign(webhook_id, now, body),
            "content-type": "application/json",
        }
        fresh = httpx.AsyncHTTPTransport(verify=tls, limits=httpx.Limits(max_keepalive_connections=0))
        async with httpx.AsyncClient(transport=fresh, trust_env=False) as client:
            await client.post(receiver.url, content=body.encode(), headers=headers)
        latencies.append(await asyncio.wait_for(arrived, 30) - t0)
        await asyncio.sleep(0.02)
    return latencies


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


async def main(samples: int) -> None:
    receiver = Receiver()
    server = await asyncio.start_server(receiver.handle, "127.0.0.1", 0)
    receiver.port = server.sockets[0].getsockname()[1]
    server_url = parse_database_url(os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    name = f"agentkit_bench_webhooks_{secrets.token_hex(4)}"
    url = await create_database(server_url, name)
    engine = create_engine(url, pool_size=5, max_overflow=0)
    try:
        await AlembicSchemaMigrator(engine).upgrade()
        await raw(receiver, 20)  # warm up both paths
        await pipeline(receiver, InMemoryWebhookOutbox(), None, 20)
        results = {
            "raw signed POST": await raw(receiver, samples),
            "pipeline, memory outbox": (memory := await pipeline(receiver, InMemoryWebhookOutbox(), None, samples))[
                "latency"
            ],
            "pipeline, PostgreSQL outbox": (
                postgres := await pipeline(receiver, SqlaWebhookOutbox(engine), SqlaRunRepository(engine), samples)
            )["latency"],
        }
    finally:
        await engine.dispose()
        await drop_database(server_url, name)
        server.close()
    floor = statistics.median(results["raw signed POST"]) * 1000
    print(f"{samples} events, one at a time\n")
    print("| | p50 | p99 | p50 over raw |")
    print("| --- | ---: | ---: | ---: |")
    for label, values in results.items():
        print(
            f"| {label} | {pct(values, 0.5):.2f} ms | {pct(values, 0.99):.2f} ms | +{pct(values, 0.5) - floor:.2f} ms |"
        )
    on_run = memory["on_run"] + postgres["on_run"]
    p50, p99 = pct(on_run, 0.5) * 1000, pct(on_run, 0.99) * 1000
    print(f"\non the run's path (notifier.on_run): p50 {p50:.0f} us, p99 {p99:.0f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300)
    asyncio.run(main(parser.parse_args().samples))
