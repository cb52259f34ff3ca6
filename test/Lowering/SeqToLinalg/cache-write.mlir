// RUN: seq-opt %s --convert-seq-to-linalg | FileCheck %s

// seq.cache_write: one iteration per batch row, the cache carried through
// the loop (written in place after bufferization). The row's end must fit
// the cache (signed: a negative position is not an error); the rows before
// position 0 (the pads of a left-padded row at -pad) are not stored: the
// row's skip = clamp(-p, 0, n) first rows are dropped and the n - skip
// others inserted at p + skip (all n at p when p >= 0).
func.func @cache_write(%kc: tensor<?x2x128x16xf32>, %k: tensor<?x2x?x16xf32>,
                       %pos: tensor<?xi32>) -> tensor<?x2x128x16xf32> {
  %0 = seq.cache_write %kc, %k, %pos : tensor<?x2x128x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>
  return %0 : tensor<?x2x128x16xf32>
}
// CHECK-LABEL: func.func @cache_write(
//  CHECK-SAME:     %[[KC:[^:]*]]: tensor<?x2x128x16xf32>, %[[K:[^:]*]]: tensor<?x2x?x16xf32>, %[[POS:[^:]*]]: tensor<?xi32>)
//       CHECK:   cf.assert %{{.+}}, "seq.cache_write: positions size differs from the batch"
//       CHECK:   scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[C:.+]] = %[[KC]])
//       CHECK:     %[[PV:.+]] = tensor.extract %[[POS]][%[[R]]] : tensor<?xi32>
//       CHECK:     %[[P:.+]] = arith.index_cast %[[PV]] : i32 to index
//       CHECK:     %[[END:.+]] = arith.addi %[[P]], %[[N:.+]] : index
//       CHECK:     %[[FITS:.+]] = arith.cmpi sle, %[[END]], %{{.+}} : index
//       CHECK:     cf.assert %[[FITS]], "seq.cache_write: position + new rows exceeds the cache length"
//       CHECK:     %[[NEG:.+]] = arith.subi %{{.+}}, %[[P]] : index
//       CHECK:     %[[POSITIVE:.+]] = arith.maxsi %[[NEG]], %{{.+}} : index
//       CHECK:     %[[SKIP:.+]] = arith.minsi %[[POSITIVE]], %[[N]] : index
//       CHECK:     %[[COUNT:.+]] = arith.subi %[[N]], %[[SKIP]] : index
//       CHECK:     %[[AT:.+]] = arith.addi %[[P]], %[[SKIP]] : index
//       CHECK:     %[[ROW:.+]] = tensor.extract_slice %[[K]][%[[R]], 0, %[[SKIP]], 0] [1, 2, %[[COUNT]], 16] [1, 1, 1, 1]
//       CHECK:     %[[NEW:.+]] = tensor.insert_slice %[[ROW]] into %[[C]][%[[R]], 0, %[[AT]], 0] [1, 2, %[[COUNT]], 16] [1, 1, 1, 1]
//       CHECK:     scf.yield %[[NEW]]
