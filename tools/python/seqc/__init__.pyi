# Type stubs of the seqc package (docs/python.md).
import builtins
import os
from typing import (Any, Callable, Dict, Iterator, List, Mapping,
                    MutableMapping, NamedTuple, Optional, Sequence, Tuple,
                    Union)

import numpy as np

_Source = Union[str, os.PathLike]
_Array = Any  # numpy.ndarray, a torch.Tensor or any DLPack producer

STAGES: Tuple[str, ...]

class Error(Exception): ...

class CompileError(Error):
    file: str
    line: int
    column: int
    message: str
    log: str
    diagnostics: List[Tuple[str, str, int, int, str]]

class RuntimeError(Error, builtins.RuntimeError):
    code: int

class InvalidArgumentError(RuntimeError, builtins.ValueError): ...
class FileError(RuntimeError, builtins.OSError): ...
class OutOfMemoryError(RuntimeError, builtins.MemoryError): ...

class ValueInfo(NamedTuple):
    name: str
    dtype: str
    shape: Tuple[Union[int, str], ...]

def emit(source: _Source, stage: str = ..., *, target: str = ...,
         opt_level: int = ..., defines: Optional[Mapping[str, Any]] = ...,
         mcpu: Optional[str] = ..., mattr: Optional[str] = ...,
         remarks: bool = ...) -> str: ...
def compile(source: _Source, *, target: str = ..., opt_level: int = ...,
            defines: Optional[Mapping[str, Any]] = ...,
            mcpu: Optional[str] = ..., mattr: Optional[str] = ...,
            remarks: bool = ..., gpu_interpret: bool = ...) -> Module: ...
def load_library(path: _Source) -> Module: ...

class Module:
    path: str
    log: str
    def save(self, path: _Source) -> None: ...
    def load(self, weights: Union[_Source, Mapping[str, _Array], None] = ...,
             *, random_weights: Optional[int] = ..., skip_unused: bool = ...,
             skip: Sequence[str] = ...,
             name_table: Optional[str] = ...) -> Model: ...

class Model:
    name: str
    inputs: List[ValueInfo]
    outputs: List[ValueInfo]
    params: List[ValueInfo]
    state: List[ValueInfo]
    dims: MutableMapping[str, int]
    skipped: List[Tuple[str, str, Tuple[int, ...]]]
    dequantized: List[Tuple[str, str, str, str]]
    last_generate_stats: Dict[str, Any]
    @property
    def manifest(self) -> str: ...
    def clone(self) -> Model: ...
    def load_weights(self, path: _Source, *, skip_unused: bool = ...,
                     skip: Sequence[str] = ...,
                     name_table: Optional[str] = ...) -> None: ...
    def set_params(self, params: Mapping[str, _Array]) -> None: ...
    def save_weights(self, path: _Source) -> None: ...
    def set_input(self, name: str, value: _Array) -> bool: ...
    def input_pointer(self, name: str) -> int: ...
    def param_pointer(self, name: str) -> int: ...
    def run(self) -> None: ...
    def output(self, name: str, as_torch: bool = ...) -> Any: ...
    def __call__(self, *args: _Array, as_torch: bool = ...,
                 **inputs: _Array) -> Any: ...
    def reset_state(self) -> None: ...
    def copy_state_row(self, src: int, dst: int) -> None: ...
    def generate(self, input_ids: Sequence[Any], max_new_tokens: int = ...,
                 *, temperature: float = ..., top_k: int = ...,
                 top_p: float = ..., repetition_penalty: float = ...,
                 seed: int = ..., stop: Sequence[int] = ...,
                 stream: Optional[Callable[[int, int], Any]] = ...) -> Any: ...
    def close(self) -> None: ...
    def __enter__(self) -> Model: ...
    def __exit__(self, *exc: Any) -> None: ...
