// Pass: storage_flatten (TVM's tir.transform.StorageFlatten / FlattenBuffer). Every buffer of a
// function that is not already flat becomes a one-dimensional buffer over the same data variable,
// and every access becomes a single flat element offset:
//  - the flat offset of (i0, ..., ik) is elem_offset + sum(i_j * stride_j), with the buffer's
//    explicit strides when it has them and the compact row-major ones from its shape otherwise,
//    simplified by arith::Analyzer under the enclosing loop ranges (constants folded);
//  - vector indices (Ramp/Broadcast lanes) give a vector flat offset (scalar terms broadcast);
//  - the flat buffer keeps name, dtype, scope and data variable; its shape is {span} with
//    span = elem_offset + 1 + sum((shape_j - 1) * stride_j) (the product of the shape when the
//    buffer is compact with offset 0), its strides are empty and its elem_offset is 0 (the
//    original offset is folded into the indices). A zero-dimensional buffer becomes shape {1}.
//  - parameter buffers (the buffer map) and Allocate buffers are both flattened; a buffer that
//    is one-dimensional, compact and at offset 0 is kept as the same handle. An access that
//    already has a single flat index into a buffer of another rank keeps its index (it already
//    counts from the start of the data) and uses the flat buffer.
//  - tir.access_ptr(data, offset, extent, mask) counts `offset` in elements from the start of
//    `data` (intrinsics.h), which is the flat index space this pass produces, so its data
//    variable and meaning are kept; its offset and extent are simplified like the indices.
// Loop structure, scopes and dtypes are unchanged. Copy-on-write: a function whose buffers are
// all flat already is returned as the same handle.
//
// Preconditions: a well-formed function (verify()); shapes, strides and offsets are integer
// expressions of the parameters. Errors: InternalError for an access whose index count matches
// neither the buffer's dimensions nor one flat index (the verifier rejects such IR).
#pragma once

#include "compiler/tir/function.h"

namespace tessel::tir::transforms {

/// The function with every buffer one-dimensional (see the file comment).
PrimFunc storage_flatten(const PrimFunc& f);

}  // namespace tessel::tir::transforms
