"""The runs and steps tables, as SQLAlchemy Core (no ORM classes: rows map to domain Structs in mapping.py).

The spec's data model, plus what DESIGN.md adds to a run: owner, structured output and its schema,
lease times (expiry, heartbeat), the cancel flag, the idempotency key and the attempt used for fencing.
The migrations in `migrations/versions/` create exactly these; a test compares the two.
"""

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    Uuid,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# none_as_null: a Python None is SQL NULL, not the JSON literal null.
_Json = JSONB(none_as_null=True)
_Time = DateTime(timezone=True)
_UNFINISHED = text("status IN ('pending', 'running')")

runs = Table(
    "runs",
    metadata,
    Column("id", Uuid(as_uuid=False), primary_key=True),
    Column("owner", Text, nullable=False),
    Column("session_id", Text),
    Column("goal", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("final_answer", Text),
    Column("output", _Json),
    Column("output_schema", _Json),
    Column("failure_reason", Text),
    Column("max_steps", Integer, nullable=False),
    Column("token_budget", Integer),
    Column("total_input_tokens", Integer, nullable=False, server_default="0"),
    Column("total_output_tokens", Integer, nullable=False, server_default="0"),
    # US dollars; NULL where no call's price was known (never 0 for want of a price)
    Column("cost_usd", Double),
    Column("cost_budget", Double),
    Column("created_at", _Time, nullable=False),
    Column("started_at", _Time),
    Column("finished_at", _Time),
    Column("expires_at", _Time),
    Column("heartbeat_at", _Time),
    Column("cancel_requested", Boolean, nullable=False, server_default="false"),
    Column("idempotency_key", Text),
    Column("request_fingerprint", Text),
    Column("attempt", Integer, nullable=False, server_default="0"),
    # the calls of non-idempotent tools that may be running, a JSON array of call ids (a resumed run
    # must not repeat them)
    Column("calling", _Json),
    # which agent profile, and which version of it (a digest), the run ran with
    Column("agent", Text, nullable=False, server_default="default"),
    Column("agent_version", Text),
    # a paused run's pending calls and their answers (a RequiredAction), and how often it paused
    Column("action", _Json),
    Column("pauses", Integer, nullable=False, server_default="0"),
    # tool names needing approval in this run, and the client's own tools (their schemas)
    Column("approval_required", _Json),
    Column("client_tools", _Json),
    Column("callback_url", Text),
    Column("stream", Boolean, nullable=False, server_default="false"),
    # a child run: the run whose call of its agent started it, that call and its LLM step
    Column("parent_run_id", Uuid(as_uuid=False)),
    Column("parent_call_id", Text),
    Column("parent_step_no", Integer),
    # the agents of its ancestors, root first (a JSON array; NULL for a root run)
    Column("lineage", _Json),
    # what its ended child runs spent, theirs included
    Column("children_input_tokens", Integer, nullable=False, server_default="0"),
    Column("children_output_tokens", Integer, nullable=False, server_default="0"),
    Column("children_cost_usd", Double),
    # the LLM calls it made, and those its ended child runs made (0012): the tree's steps
    Column("turns", Integer, nullable=False, server_default="0"),
    Column("children_turns", Integer, nullable=False, server_default="0"),
    Index("ix_runs_session_id", "session_id"),
    # a run's children, oldest first
    Index(
        "ix_runs_parent_run_id_created_at",
        "parent_run_id",
        "created_at",
        postgresql_where=text("parent_run_id IS NOT NULL"),
    ),
    # the listing's keyset: an owner's runs by (created_at, id), newest first
    Index("ix_runs_owner_created_at_id", "owner", "created_at", "id"),
    Index(
        "uq_runs_owner_idempotency_key",
        "owner",
        "idempotency_key",
        unique=True,
        postgresql_where=text("idempotency_key IS NOT NULL"),
    ),
    # The sweeper looks for unfinished runs whose lease lapsed; prune for old finished ones.
    Index("ix_runs_unfinished_expires_at", "expires_at", postgresql_where=_UNFINISHED),
    Index("ix_runs_requires_action_expires_at", "expires_at", postgresql_where=text("status = 'requires_action'")),
    Index("ix_runs_waiting_expires_at", "expires_at", postgresql_where=text("status = 'waiting'")),
    Index("ix_runs_finished_at", "finished_at", postgresql_where=text("finished_at IS NOT NULL")),
)

steps = Table(
    "steps",
    metadata,
    Column("id", Uuid(as_uuid=False), primary_key=True, server_default=text("gen_random_uuid()")),
    Column("run_id", Uuid(as_uuid=False), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("step_no", Integer, nullable=False),
    Column("kind", Text, nullable=False),
    Column("tool_name", Text),
    Column("call_id", Text),
    Column("args", _Json),
    Column("result", _Json),
    Column("error", Text),
    # Milliseconds as a float: sub-millisecond tool calls (a calculator) would read back as 0 in an INT.
    Column("latency_ms", Double, nullable=False),
    Column("input_tokens", Integer, nullable=False, server_default="0"),
    Column("output_tokens", Integer, nullable=False, server_default="0"),
    # the parts of input_tokens read from and written to the provider's prompt cache (0010)
    Column("cache_read_tokens", Integer, nullable=False, server_default="0"),
    Column("cache_write_tokens", Integer, nullable=False, server_default="0"),
    Column("created_at", _Time, nullable=False),
    # an LLM step's PromptRef (how many of the run's messages it sent, its tool set, model, parameters)
    Column("request", _Json),
    Column("cost_usd", Double),
    Index("ix_steps_run_id_step_no", "run_id", "step_no"),
)

# Each message of a run's conversation once, however many LLM calls sent it (they send prefixes).
run_messages = Table(
    "run_messages",
    metadata,
    Column("run_id", Uuid(as_uuid=False), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("digest", Text, nullable=False),
    Column("message", _Json, nullable=False),
    PrimaryKeyConstraint("run_id", "seq"),
)

# Each distinct set of tool schemas a run's LLM calls offered, once, by digest.
run_tool_sets = Table(
    "run_tool_sets",
    metadata,
    Column("run_id", Uuid(as_uuid=False), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("digest", Text, nullable=False),
    Column("schemas", _Json, nullable=False),
    PrimaryKeyConstraint("run_id", "digest"),
)

# Each webhook event of a run (its id is the `webhook-id`), with every attempt made to deliver it.
webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", Text, primary_key=True),
    Column("run_id", Uuid(as_uuid=False), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("owner", Text, nullable=False),
    Column("event", Text, nullable=False),
    Column("url", Text, nullable=False),
    # the exact body that is signed and sent on every attempt
    Column("payload", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("attempts", _Json, nullable=False, server_default=text("'[]'::jsonb")),
    # len(attempts), kept beside them: the fence a sender's write of its attempt is checked against
    Column("attempt_count", Integer, nullable=False, server_default="0"),
    Column("created_at", _Time, nullable=False),
    # when a pending delivery is due, or until when the sender that claimed it holds it
    Column("next_attempt_at", _Time, nullable=False),
    Column("finished_at", _Time),
    Column("failure_reason", Text),
    Index("ix_webhook_deliveries_run_id_created_at", "run_id", "created_at"),
    # the senders' claim: pending deliveries by due time
    Index(
        "ix_webhook_deliveries_pending_next_attempt_at", "next_attempt_at", postgresql_where=text("status = 'pending'")
    ),
)
