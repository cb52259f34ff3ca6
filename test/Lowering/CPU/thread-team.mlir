// RUN: seq-opt %s --seq-cpu-thread-team -split-input-file | FileCheck %s
// RUN: seq-opt %s --seq-cpu-thread-team=remarks=true -split-input-file -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: seq-opt %s --seq-cpu-thread-team -split-input-file \
// RUN:   -debug-only=seq-cpu-thread-team -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

// A model function whose parallel loops, layer call and copy run in one
// team: one omp.parallel for the whole body, the loops as worksharing loops,
// the copy in an omp.single, the views computed by every thread before the
// region, and the layer (two loops and a serial kernel) in its team form.

// CHECK-LABEL: func.func @forward(
// CHECK:         memref.view
// CHECK:         memref.view
// CHECK-NEXT:    omp.parallel {
// CHECK-NEXT:      omp.wsloop {
// CHECK:           omp.single {
// CHECK-NEXT:        memref.copy
// CHECK-NEXT:        omp.terminator
// CHECK-NEXT:      }
// CHECK-NEXT:      call @layer_team(
// CHECK-NEXT:      call @layer_team(
// CHECK-NEXT:      omp.terminator
// CHECK-NEXT:    }
// CHECK-NOT:     omp.parallel
// CHECK:         return

// The layer's team form: no region of its own, its loops orphaned, the
// serial kernel and the assert grouped in one omp.single.
// CHECK-LABEL: func.func private @layer_team(
// CHECK-NOT:     omp.parallel
// CHECK:         omp.wsloop {
// CHECK:         omp.single {
// CHECK-NEXT:      cf.assert
// CHECK-NEXT:      call @serial_kernel(
// CHECK-NEXT:      omp.terminator
// CHECK-NEXT:    }
// CHECK:         omp.wsloop {
// CHECK:         return
// The original layer, called nowhere now, is gone; the serial kernel stays.
// CHECK-NOT:   func.func private @layer(
// CHECK:       func.func private @serial_kernel(

// REMARK: remark: 'forward' runs 5 of its 5 parallel loops in 1 thread team
// REMARK-NOT: remark: 'layer'

// DEBUG: [seq-cpu-thread-team] @layer can join its caller's team (2 worksharing loops)
// DEBUG: [seq-cpu-thread-team] @layer_team: team form of @layer
// DEBUG: [seq-cpu-thread-team] @forward: one team for 5 worksharing loops at
// DEBUG: [seq-cpu-thread-team] @forward: team boundary: func.return at
// DEBUG: [seq-cpu-thread-team] @layer is no longer called
func.func @forward(%arena: memref<?xi8>, %n: index, %a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.view %arena[%c0][%n] : memref<?xi8> to memref<?xf32>
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %zero, %x[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  %y = memref.view %arena[%n][%n] : memref<?xi8> to memref<?xf32>
  memref.copy %x, %y : memref<?xf32> to memref<?xf32>
  call @layer(%n, %x, %y) : (index, memref<?xf32>, memref<?xf32>) -> ()
  call @layer(%n, %y, %x) : (index, memref<?xf32>, memref<?xf32>) -> ()
  return
}

func.func private @layer(%n: index, %x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %v = memref.load %x[%i] : memref<?xf32>
        memref.store %v, %y[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  %ok = arith.cmpi sgt, %n, %c0 : index
  cf.assert %ok, "empty"
  call @serial_kernel(%y) : (memref<?xf32>) -> ()
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %v = memref.load %y[%i] : memref<?xf32>
        memref.store %v, %x[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

func.func private @serial_kernel(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %y[%c0] : memref<?xf32>
  return
}

// -----

// An allocation ends the team (a refused one unwinds the call, which must
// not happen inside a parallel region): the loops on either side keep their
// own regions, one loop each.

// CHECK-LABEL: func.func @split(
// CHECK:         omp.parallel {
// CHECK-NEXT:      omp.wsloop {
// CHECK:         memref.alloc
// CHECK:         omp.parallel {
// CHECK-NEXT:      omp.wsloop {
// REMARK-NOT: remark: 'split'
// DEBUG-NOT: @split: one team
func.func @split(%n: index, %x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %zero, %x[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  %out = memref.alloc(%n) : memref<?xf32>
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %zero, %out[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return %out : memref<?xf32>
}

// -----

// A test at run time between two forms of an op (the grouped decode form of
// attention or the general one, a packed or an unpacked kernel): an scf.if
// without results whose branches hold only parallel loops, team calls,
// serial and replicated ops runs inside the team. Every thread computes the
// condition alike and takes the same branch; the loops in it become
// worksharing loops of the team, its calls call team forms, its serial ops
// run in an omp.single. The function can then join its caller's team.

// CHECK-LABEL: func.func @branch(
// CHECK:         omp.parallel {
// CHECK-NEXT:      omp.wsloop {
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        omp.wsloop {
// CHECK:             call @kernel_team(
// CHECK-NEXT:      } else {
// CHECK-NEXT:        omp.single {
// CHECK-NEXT:          memref.copy
// CHECK-NEXT:          omp.terminator
// CHECK-NEXT:        }
// CHECK-NEXT:        call @kernel_team(
// CHECK-NEXT:      }
// CHECK-NEXT:      omp.terminator
// CHECK-NEXT:    }
// CHECK-NOT:     omp.parallel
// CHECK:         return
// A branch holding an allocation still ends the team: each loop keeps its
// own region.
// CHECK-LABEL: func.func @branch_alloc(
// CHECK:         omp.parallel {
// CHECK-NEXT:      omp.wsloop {
// CHECK:         scf.if
// CHECK-NEXT:      memref.alloc
// CHECK-NEXT:      omp.parallel {
// REMARK: remark: 'branch' runs 4 of its 4 parallel loops in 1 thread team{{$}}
// REMARK-NOT: remark: 'branch_alloc'
// DEBUG: [seq-cpu-thread-team] @kernel can join its caller's team (1 worksharing loops)
// DEBUG: [seq-cpu-thread-team] @branch: one team for 4 worksharing loops at
// DEBUG-NOT: @branch: team boundary: scf.if
// DEBUG-NOT: @branch_alloc: one team
func.func @branch(%n: index, %x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %zero, %x[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  %one = arith.cmpi eq, %n, %c1 : index
  scf.if %one {
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
          %v = memref.load %x[%i] : memref<?xf32>
          memref.store %v, %y[%i] : memref<?xf32>
          omp.yield
        }
      }
      omp.terminator
    }
    func.call @kernel(%n, %y) : (index, memref<?xf32>) -> ()
  } else {
    memref.copy %x, %y : memref<?xf32> to memref<?xf32>
    func.call @kernel(%n, %y) : (index, memref<?xf32>) -> ()
  }
  return
}

func.func @branch_alloc(%n: index, %x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %zero, %x[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  %one = arith.cmpi eq, %n, %c1 : index
  scf.if %one {
    %t = memref.alloc(%n) : memref<?xf32>
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
          memref.store %zero, %t[%i] : memref<?xf32>
          omp.yield
        }
      }
      omp.terminator
    }
    memref.copy %t, %x : memref<?xf32> to memref<?xf32>
    memref.dealloc %t : memref<?xf32>
  }
  return
}

func.func private @kernel(%n: index, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %zero, %y[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
