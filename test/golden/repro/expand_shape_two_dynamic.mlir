// Upstream MLIR 22.1.8 crash (not a seqc test):
//   mlir-opt --expand-strided-metadata expand_shape_two_dynamic.mlir   # SIGSEGV
// memref.expand_shape with two dynamic sizes in one reassociation group.
// With one dynamic size per group (?x2 -> ?x4x2) the pass works.
func.func @f(%a: memref<?x2xf32>, %d0: index, %d1: index) -> memref<?x?x2xf32> {
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%d0, %d1, 2] : memref<?x2xf32> into memref<?x?x2xf32>
  return %e : memref<?x?x2xf32>
}
