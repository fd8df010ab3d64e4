"""Timeline: instants, their commit metadata, and timestamp parsing."""

from hudi_ray.core.timeline.instant import HudiInstant, State
from hudi_ray.core.timeline.timeline import HudiTimeline
from hudi_ray.core.timeline.timestamps import parse_timestamp

__all__ = ["HudiInstant", "HudiTimeline", "State", "parse_timestamp"]
