// RUN: seq-opt %s --seq-cpu-static-schedule -split-input-file | FileCheck %s

// A worksharing loop of a team becomes the loop over the calling thread's
// block of iterations: total / n each, one more for the first total % n
// threads (libomp's balanced static schedule), then the loop's implicit
// barrier; the last loop of the region keeps only the region's join.

// CHECK-DAG:   func.func private @omp_get_thread_num() -> i32
// CHECK-DAG:   func.func private @omp_get_num_threads() -> i32
// CHECK-LABEL: func.func @team
// CHECK:         omp.parallel {
// CHECK:           %[[T:.+]] = {{(func\.)?}}call @omp_get_thread_num() : () -> i32
// CHECK:           %[[TI:.+]] = arith.index_cast %[[T]] : i32 to index
// CHECK:           %[[NT:.+]] = {{(func\.)?}}call @omp_get_num_threads() : () -> i32
// CHECK:           %[[NI:.+]] = arith.index_cast %[[NT]] : i32 to index
// CHECK:           %[[SMALL:.+]] = arith.divui %[[TOTAL:.+]], %[[NI]] : index
// CHECK:           %[[EXTRA:.+]] = arith.remui %[[TOTAL]], %[[NI]] : index
// CHECK:           %[[LOW:.+]] = arith.muli %[[TI]], %[[SMALL]] : index
// CHECK:           %[[SHIFT:.+]] = arith.minui %[[TI]], %[[EXTRA]] : index
// CHECK:           %[[BEGIN:.+]] = arith.addi %[[LOW]], %[[SHIFT]] : index
// CHECK:           %[[LESS:.+]] = arith.cmpi ult, %[[TI]], %[[EXTRA]] : index
// CHECK:           %[[MORE:.+]] = arith.select %[[LESS]]
// CHECK:           %[[COUNT:.+]] = arith.addi %[[SMALL]], %[[MORE]] : index
// CHECK:           %[[END:.+]] = arith.addi %[[BEGIN]], %[[COUNT]] : index
// CHECK:           scf.for %[[K:.+]] = %[[BEGIN]] to %[[END]] step %{{.+}} {
// CHECK:             %[[S:.+]] = arith.muli %[[K]], %{{.+}} : index
// CHECK:             %[[I:.+]] = arith.addi %{{.+}}, %[[S]] : index
// CHECK:             memref.store %{{.+}}, %{{.+}}[%[[I]]] : memref<?xf32>
// CHECK:           }
// CHECK-NEXT:      omp.barrier
// CHECK:           scf.for
// CHECK:             memref.store
// CHECK:           }
// CHECK-NEXT:      omp.terminator
// CHECK-NOT:     omp.wsloop
func.func @team(%n: index, %a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cst = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c2) {
        memref.store %cst, %a[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %cst, %b[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// A collapsed nest of two loops counts every iteration, the last dimension
// fastest: the linear index is split by the second trip count. A loop in a
// team function (orphaned) keeps its barrier.

// CHECK-LABEL: func.func @nest_team
// CHECK:         arith.ceildivui
// CHECK:         %[[N1:.+]] = arith.ceildivui %{{.+}}, %{{.+}} : index
// CHECK:         scf.for %[[K:.+]] =
// CHECK:           %[[J:.+]] = arith.remui %[[K]], %[[N1]] : index
// CHECK:           %[[I:.+]] = arith.divui %[[K]], %[[N1]] : index
// CHECK:           %[[JS:.+]] = arith.muli %[[J]], %{{.+}} : index
// CHECK:           %[[JJ:.+]] = arith.addi %{{.+}}, %[[JS]] : index
// CHECK:           %[[IS:.+]] = arith.muli %[[I]], %{{.+}} : index
// CHECK:           %[[II:.+]] = arith.addi %{{.+}}, %[[IS]] : index
// CHECK:           memref.store %{{.+}}, %{{.+}}[%[[II]], %[[JJ]]] : memref<?x?xf32>
// CHECK:         }
// CHECK-NEXT:    omp.barrier
// CHECK-NEXT:    return
func.func @nest_team(%m: index, %n: index, %a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  omp.wsloop {
    omp.loop_nest (%i, %j) : index = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
      memref.store %cst, %a[%i, %j] : memref<?x?xf32>
      omp.yield
    }
  }
  return
}

// -----

// A loop with a clause (here nowait) is left to libomp.

// CHECK-LABEL: func.func @nowait
// CHECK:         omp.wsloop nowait
// CHECK-NOT:     call @omp_get_thread_num
func.func @nowait(%n: index, %a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop nowait {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %cst, %a[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
