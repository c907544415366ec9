"""The checked-in generated modules are exactly what the generator makes from the specs."""

from __future__ import annotations

from mockbroker_protocol import _codegen


def test_generated_modules_match_the_specs() -> None:
    files = _codegen.format_source(_codegen.generate_all())
    drift = list(_codegen.iter_drift(files))
    assert drift == [], "mockbroker_protocol/messages/ drifted from the specs: run `make regen`\n" + "\n".join(drift)


def test_generated_modules_carry_no_spec_prose() -> None:
    """Facts only: no 'about' text from the specs is copied into the modules."""
    spec = _codegen.load_spec(_codegen.kafka_python_specs_dir() / "JoinGroupRequest.json")
    about = [f["about"] for f in spec["fields"]]  # type: ignore[index, union-attr]
    text = (_codegen.OUT_DIR / "join_group.py").read_text()
    assert about and not any(a in text for a in about)


def test_snake_case_names() -> None:
    assert _codegen.snake("SessionTimeoutMs") == "session_timeout_ms"
    assert _codegen.snake("ISRNodes") == "isr_nodes"
    assert _codegen.snake("TopicId") == "topic_id"
