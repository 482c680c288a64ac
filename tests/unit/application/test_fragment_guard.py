"""Fragments under the prompt policy: no secret leaves, even cut across fragments; no payload without payloads."""

from agentkit.application.pipeline.guard import FragmentGuard
from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.ports.run_event_log import DeltaEvent
from agentkit.domain.ids import RunId

RUN = RunId("run-1")
SECRET = "sk-secret-value-0123"


def text(piece: str, step_no: int = 1) -> DeltaEvent:
    return DeltaEvent(step_no=step_no, kind="text", text=piece)


def sent(guard: FragmentGuard, pieces: list[str]) -> str:
    """What went out of the pieces, joined."""
    out = []
    for piece in pieces:
        admitted = guard.admit(RUN, text(piece))
        if admitted is not None:
            out.append(admitted.text)
    return "".join(out)


def test_a_secret_cut_across_fragments_never_goes_out() -> None:
    guard = FragmentGuard(PromptPolicy(secrets=(SECRET,)))
    pieces = ["The key is sk-sec", "ret-val", "ue-0123, and more words follow here to push it out."]

    went = sent(guard, pieces)

    assert SECRET not in went
    assert "sk-sec" not in went
    assert went.startswith("The key is [redacted], and more")


def test_every_way_of_cutting_the_text_lets_no_part_of_a_secret_out() -> None:
    whole = f"a {SECRET} b {SECRET}{SECRET} c sk-secret-val d"
    scrubbed = PromptPolicy(secrets=(SECRET,)).scrub_text(whole)
    for first in range(1, len(whole)):
        for second in range(first + 1, len(whole), 7):
            guard = FragmentGuard(PromptPolicy(secrets=(SECRET, "another-secret-xyz")))
            went = sent(guard, [whole[:first], whole[first:second], whole[second:]])
            assert "sk-secret-value" not in went.replace("[redacted]", "")
            assert went == scrubbed[: len(went)]  # what went out is the scrubbed text, in order


def test_what_was_held_back_is_dropped_once_the_step_is_logged() -> None:
    guard = FragmentGuard(PromptPolicy(secrets=(SECRET,)))
    assert sent(guard, ["what comes next is sk-se"]) == "what comes next is "  # the start of a secret: held

    guard.step_logged(RUN, 1)

    assert sent(guard, [" next step's text, long enough to be let through"]).startswith(" next step")


def test_without_payloads_no_fragment_carries_content_and_redacted_fields_keep_arguments_back() -> None:
    no_payloads = FragmentGuard(PromptPolicy(payloads=False))
    fields = FragmentGuard(PromptPolicy(redact_fields=frozenset({"password"})))
    piece = DeltaEvent(step_no=1, kind="tool_call", index=0, text='{"password": "p4ss"}', call_id="c1", name="login")

    assert no_payloads.admit(RUN, text("hello")) is None
    assert no_payloads.admit(RUN, piece) is None
    assert fields.admit(RUN, piece) is None
    assert fields.admit(RUN, text("hello")) == text("hello")
    assert no_payloads.admit(RUN, DeltaEvent(step_no=2, kind="retry")) == DeltaEvent(step_no=2, kind="retry")


def test_text_that_begins_no_secret_goes_out_at_once() -> None:
    guard = FragmentGuard(PromptPolicy(secrets=(SECRET,)))

    assert sent(guard, ["The", " sum", " is 5."]) == "The sum is 5."


def test_with_nothing_to_hide_every_fragment_goes_as_it_came() -> None:
    assert FragmentGuard(PromptPolicy()).passes_all
    assert not FragmentGuard(PromptPolicy(secrets=(SECRET,))).passes_all
