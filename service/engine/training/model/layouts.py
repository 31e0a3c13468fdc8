"""The parallel layouts the array model (model/arrays.py, model/arrays_comm.py) evaluates: one column per degree."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

Array = np.ndarray


class Layouts(NamedTuple):
    """Parallel layouts, one per index (int64 arrays of one length; sequence_parallel and zero_bubble are bool:
    zero_bubble runs the pipeline under ZB-H1 instead of (interleaved) 1F1B, parallelism.pipeline_bubble_fraction)."""

    data: Array
    tensor: Array
    pipeline: Array
    context: Array
    expert: Array
    zero_stage: Array
    sequence_parallel: Array
    virtual_pipeline: Array
    micro_batch: Array
    zero_bubble: Array

    @property
    def devices(self) -> Array:
        return self.data * self.tensor * self.pipeline * self.context

    def take(self, index: Array) -> Layouts:
        return Layouts(*(column[index] for column in self))
