"""The green's fixtures (an assessor on loopback, relay agents in processes), for assessments on ClickHouse."""

from green.conftest import start_green, start_participant

__all__ = ["start_green", "start_participant"]
