"""Shared pieces of the run-test generators: deterministic inputs that MLIR
reproduces bit for bit, MLIR text helpers, and the check harness."""
import numpy as np
import torch

torch.set_default_dtype(torch.float64)


def gen(n, mult, seed, scale=1.0, offset=0.0):
    """((i*mult + seed) mod 997) / 498.5 - 1, scaled and shifted, in f64, then
    rounded to f32: exactly what @gen computes."""
    i = np.arange(n, dtype=np.int64)
    x = (((i * mult + seed) % 997).astype(np.float64) / 498.5 - 1.0) * scale + offset
    return x.astype(np.float32)


def fmt_shape(shape, dyn=()):
    return "x".join("?" if k in dyn else str(s) for k, s in enumerate(shape))


def ttype(shape, dyn=()):
    return f"tensor<{fmt_shape(shape, dyn)}xf32>" if shape else "tensor<f32>"


def dense(arr):
    arr = np.asarray(arr, dtype=np.float32)
    flat = ", ".join("%.8e" % v for v in arr.reshape(-1))
    return f"dense<[{flat}]> : tensor<{arr.size}xf32>"


class Case:
    """One run-test case: emits a function that builds the inputs, runs the
    op and checks the result against the reference."""

    def __init__(self, name):
        self.name = name
        self.lines = []
        self.count = 0

    def fresh(self):
        self.count += 1
        return f"%v{self.count}"

    def emit(self, line):
        self.lines.append("  " + line)

    def input(self, shape, mult, seed, scale=1.0, offset=0.0, dyn=()):
        """Emits a generated input and returns (value name, numpy array)."""
        n = int(np.prod(shape))
        g, c = self.fresh(), self.fresh()
        self.emit(f"{g} = call @gen(%c{n}, %i{mult}, %i{seed}, "
                  f"%f{self.const_f(scale)}, %f{self.const_f(offset)}) : "
                  "(index, i64, i64, f64, f64) -> tensor<?xf32>")
        self.needs_index.add(n)
        self.needs_i64.update([mult, seed])
        self.emit(f"{c} = tensor.cast {g} : tensor<?xf32> to tensor<{n}xf32>")
        value = c
        if len(shape) > 1:
            e = self.fresh()
            self.emit(f"{e} = tensor.expand_shape {c} [[{', '.join(str(k) for k in range(len(shape)))}]] "
                      f"output_shape [{', '.join(str(s) for s in shape)}] : "
                      f"tensor<{n}xf32> into {ttype(shape)}")
            value = e
        if dyn:
            d = self.fresh()
            self.emit(f"{d} = tensor.cast {value} : {ttype(shape)} to {ttype(shape, dyn)}")
            value = d
        return value, gen(n, mult, seed, scale, offset).reshape(shape)

    def const_f(self, v):
        key = ("%.17g" % v).replace("-", "m").replace(".", "p").replace("+", "")
        self.needs_f64[key] = v
        return key

    def check(self, result, shape, dyn, ref):
        n = int(np.prod(shape))
        s, f, r = self.fresh(), self.fresh(), self.fresh()
        if dyn:
            self.emit(f"{s} = tensor.cast {result} : {ttype(shape, dyn)} to {ttype(shape)}")
        else:
            s = result
        idx = ", ".join(str(k) for k in range(len(shape)))
        self.emit(f"{f} = tensor.collapse_shape {s} [[{idx}]] : {ttype(shape)} into tensor<{n}xf32>")
        self.emit(f"{r} = arith.constant {dense(ref)}")
        a, bb = self.fresh(), self.fresh()
        self.emit(f"{a} = tensor.cast {f} : tensor<{n}xf32> to tensor<?xf32>")
        self.emit(f"{bb} = tensor.cast {r} : tensor<{n}xf32> to tensor<?xf32>")
        label = self.fresh()
        self.emit(f"{label} = llvm.mlir.addressof @name_{self.name} : !llvm.ptr")
        self.emit(f"call @check({label}, {a}, {bb}) : (!llvm.ptr, tensor<?xf32>, tensor<?xf32>) -> ()")

    def render(self):
        text = f"case {self.name}: "
        head = [f'llvm.mlir.global internal constant @name_{self.name}("{text}\\00") {{addr_space = 0 : i32}}',
                f"func.func @{self.name}() {{"]
        for n in sorted(self.needs_index):
            head.append(f"  %c{n} = arith.constant {n} : index")
        for v in sorted(self.needs_i64):
            head.append(f"  %i{v} = arith.constant {v} : i64")
        for k, v in self.needs_f64.items():
            head.append(f"  %f{k} = arith.constant {v!r} : f64")
        return "\n".join(head + self.lines + ["  return", "}"]) + "\n"

    needs_index: set
    needs_i64: set
    needs_f64: dict

    def __new__(cls, *a, **k):
        obj = super().__new__(cls)
        obj.needs_index, obj.needs_i64, obj.needs_f64 = set(), set(), {}
        return obj


HARNESS = r"""
// Deterministic input i of a flat tensor of n:
//   ((i * mult + seed) mod 997) / 498.5 - 1, times scale, plus offset,
// in f64 then rounded to f32 (numpy reproduces it bit for bit).
func.func @gen(%n: index, %mult: i64, %seed: i64, %scale: f64, %offset: f64) -> tensor<?xf32> {
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e : tensor<?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.muli %ii, %mult : i64
    %ms = arith.addi %m, %seed : i64
    %c997 = arith.constant 997 : i64
    %k = arith.remsi %ms, %c997 : i64
    %kf = arith.sitofp %k : i64 to f64
    %half = arith.constant 498.5 : f64
    %q = arith.divf %kf, %half : f64
    %one = arith.constant 1.0 : f64
    %x = arith.subf %q, %one : f64
    %xs = arith.mulf %x, %scale : f64
    %xo = arith.addf %xs, %offset : f64
    %t = arith.truncf %xo : f64 to f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func private @printString(!llvm.ptr)
func.func private @printF32(f32)
func.func private @printI64(i64)
func.func private @printComma()
func.func private @printNewline()

// Prints "<label>" then the largest |got - ref|, then the number of elements
// outside |got - ref| <= ATOL + RTOL |ref| (a NaN counts as outside).
func.func @check(%label: !llvm.ptr, %got: tensor<?xf32>, %ref: tensor<?xf32>) {
  %atol = arith.constant ATOL : f32
  %rtol = arith.constant RTOL : f32
  %zf = arith.constant 0.0 : f32
  %zi = arith.constant 0 : i64
  %e0 = tensor.empty() : tensor<f32>
  %i0 = tensor.empty() : tensor<i64>
  %f0 = linalg.fill ins(%zf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %g0 = linalg.fill ins(%zi : i64) outs(%i0 : tensor<i64>) -> tensor<i64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%got, %ref : tensor<?xf32>, tensor<?xf32>) outs(%f0, %g0 : tensor<f32>, tensor<i64>) {
  ^bb0(%g: f32, %w: f32, %err: f32, %bad: i64):
    %d = arith.subf %g, %w : f32
    %a = math.absf %d : f32
    %m = arith.maximumf %err, %a : f32
    %wa = math.absf %w : f32
    %rt = arith.mulf %rtol, %wa : f32
    %tol = arith.addf %atol, %rt : f32
    %out = arith.cmpf ugt, %a, %tol : f32
    %one = arith.constant 1 : i64
    %inc = arith.addi %bad, %one : i64
    %nb = arith.select %out, %inc, %bad : i64
    linalg.yield %m, %nb : f32, i64
  } -> (tensor<f32>, tensor<i64>)
  %err = tensor.extract %r#0[] : tensor<f32>
  %bad = tensor.extract %r#1[] : tensor<i64>
  call @printString(%label) : (!llvm.ptr) -> ()
  call @printF32(%err) : (f32) -> ()
  call @printComma() : () -> ()
  call @printI64(%bad) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
"""


def render_file(header, cases, atol, rtol, check_prefix="CHECK"):
    out = [header.rstrip() + "\n"]
    for c in cases:
        out.append(f"// {check_prefix}: case {c.name}: {{{{[-+.e0-9]+}}}}, 0{{{{$}}}}")
    out.append("")
    out.append("func.func @main() {")
    for c in cases:
        out.append(f"  call @{c.name}() : () -> ()")
    out.append("  return")
    out.append("}")
    out.append(HARNESS.replace("ATOL", "%.1e" % atol).replace("RTOL", "%.1e" % rtol))
    for c in cases:
        out.append(c.render())
    return "\n".join(out)
