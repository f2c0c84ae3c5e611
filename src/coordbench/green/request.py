"""The assessment request: ``{"participants": {role: url}, "config": {...}}``, validated with precise errors.

The AgentBeats client sends it as the text of one message; a DataPart with the same object
is accepted too. Anything else (a plain "Hello" included) is rejected with a message that
says exactly what is wrong.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from a2a.helpers import get_data_parts, get_text_parts
from a2a.types import Message
from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from coordbench import jsontext
from coordbench.errors import CoordbenchError, describe_validation_error
from coordbench.evals.assessment_config import AssessmentConfig, ScenarioConfig

__all__ = ["SAMPLE_REQUEST", "AssessmentRequest", "RequestError", "parse_request", "validate_request"]


class RequestError(CoordbenchError, ValueError):
    """The assessment request is not usable; the message says why."""

    default_message = "invalid assessment request"


class AssessmentRequest(BaseModel):
    """A validated assessment request."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    participants: dict[str, AnyHttpUrl] = Field(min_length=1, max_length=100)
    config: AssessmentConfig = Field(default_factory=AssessmentConfig)

    @field_validator("participants")
    @classmethod
    def _roles(cls, participants: dict[str, AnyHttpUrl]) -> dict[str, AnyHttpUrl]:
        for role in participants:
            if not role.strip():
                raise ValueError("participant roles must be non-empty")
        return participants

    @model_validator(mode="after")
    def _entries_exist(self) -> AssessmentRequest:
        roles = set(self.participants)
        wanted = [("config.entry", self.config.entry)] + [
            (f"scenario {s.id!r} entry", s.entry) for s in self.config.scenarios or []
        ]
        for where, role in wanted:
            if role is not None and role not in roles:
                raise ValueError(
                    f"{where} names role {role!r}, which is not a participant ({', '.join(sorted(roles))})"
                )
        return self

    @property
    def entry_role(self) -> str:
        """The role that receives tasks unless a scenario says otherwise."""
        if self.config.entry is not None:
            return self.config.entry
        for role in ("coordinator", "agent"):
            if role in self.participants:
                return role
        return next(iter(self.participants))

    def url_of(self, role: str) -> str:
        """A participant's base URL."""
        return str(self.participants[role])

    def scenarios(self) -> list[ScenarioConfig]:
        """Every scenario of the assessment (before sharding), in order."""
        return self.config.all_scenarios()

    def shard(self) -> list[ScenarioConfig]:
        """The scenarios this run assesses (``i % num_shards == shard_index``)."""
        config = self.config
        return [s for i, s in enumerate(self.scenarios()) if i % config.num_shards == config.shard_index]


SAMPLE_REQUEST: dict[str, Any] = {
    "participants": {"coordinator": "http://127.0.0.1:9019/", "researcher": "http://127.0.0.1:9020/"},
    "config": {
        "scenarios": [
            {
                "id": "launch-plan",
                "task": "Plan the launch of a note-taking app: owners, timeline, risks.",
                "references": ["Owners per workstream, a dated timeline and the top risks with mitigations."],
            }
        ],
        "ground_truth": False,
        "timeout": 300,
    },
}
"""A complete request, shown in the green's agent card."""


def _describe(error: ValidationError, prefix: str = "") -> str:
    return describe_validation_error(error, prefix=prefix, whole="request")


def parse_request(message: Message | None) -> AssessmentRequest:
    """Read and validate the assessment request in ``message``.

    The first data part holding an object is used; otherwise the text parts, joined, must
    be that JSON object.

    Raises:
        RequestError: With exactly what is wrong, e.g. that the text is not JSON, that
            ``participants`` is missing, or which URL is invalid.
    """
    if message is None:
        raise RequestError('no message: send {"participants": {role: url}, "config": {...}}')
    document: Any = next(
        (cast("dict[str, Any]", v) for v in get_data_parts(message.parts) if isinstance(v, dict)), None
    )
    if document is None:
        text = "".join(get_text_parts(message.parts)).strip()
        if not text:
            raise RequestError(
                'the message has no text or data part; send {"participants": {role: url}, "config": {...}}'
            )
        try:
            document = jsontext.loads(text)
        except ValueError as exc:
            preview = text if len(text) <= 60 else text[:57] + "..."
            raise RequestError(
                f"the message is not an assessment request: expected a JSON object "
                f'{{"participants": {{role: url}}, "config": {{...}}}}, got text {preview!r} ({exc})'
            ) from exc
    return validate_request(document)


ModelT = TypeVar("ModelT", bound=BaseModel)


def _validated(model: type[ModelT], document: object, what: str, prefix: str = "") -> ModelT:
    if not isinstance(document, dict):
        raise RequestError(f"the {what} must be a JSON object, got {type(document).__name__}")
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise RequestError(f"invalid {what}: {_describe(exc, prefix)}") from exc


def validate_request(document: object) -> AssessmentRequest:
    """Validate a decoded request object.

    Raises:
        RequestError: With the first few problems, each naming its field.
    """
    if not isinstance(document, dict):
        raise RequestError(f"the request must be a JSON object, got {type(document).__name__}")
    return _validated(AssessmentRequest, cast("object", document), "assessment request")
