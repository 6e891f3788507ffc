from typing import Any, Optional

from ._tally import counter as counter
from ._tally import counter_rate as counter_rate
from ._tally import now as now
from ._tally import record_range as record_range
from ._tally import current as current
from ._tally import enabled as enabled
from ._tally import flush as flush
from ._tally import init as init
from ._tally import iteration as iteration
from ._tally import memory_snapshot as memory_snapshot
from ._tally import register_memory_provider as register_memory_provider
from ._tally import section as section
from ._tally import set_rank as set_rank
from ._tally import shutdown as shutdown
from ._tally import stats as stats
from ._tally import step as step

__version__: str

def event(name: str, **fields: Any) -> None: ...
def section_args(**meta: Any) -> None: ...

class stage:
    def __init__(self, name: str, **meta: Any) -> None: ...
    def __enter__(self) -> "stage": ...
    def __exit__(self, *exc: Any) -> Optional[bool]: ...

class block:
    frames: float
    def __init__(self, frames: Optional[float] = ...) -> None: ...
    def __enter__(self) -> "block": ...
    def __exit__(self, *exc: Any) -> bool: ...

def tag(key: str, value: Any) -> None: ...
