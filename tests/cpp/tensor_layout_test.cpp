// The layout rules functionalisation and re-inplacing give the tensors they make or rewrite
// (engine/src/passes/tensor_layout.hpp). Every expected stride below is what torch 2.14 (CPU)
// returns for the same call on a tensor of that shape and those strides.
#include <doctest/doctest.h>

#include "passes/tensor_layout.hpp"

namespace graft::layout {
namespace {

TEST_CASE("layout: row-major, channels-last and the tests torch makes on strides") {
  CHECK(contiguous({1, 197, 768}) == Sizes{151296, 768, 1});
  CHECK(contiguous({2, 1, 3}) == Sizes{3, 3, 1});  // a size-1 dim takes the stride after it
  CHECK(channels_last({2, 3, 4, 5}) == Sizes{60, 1, 15, 3});
  // torch.zeros(197, 1, 768).transpose(0, 1): contiguous for torch, though not row-major
  CHECK(is_contiguous({1, 197, 768}, {768, 768, 1}));
  CHECK_FALSE(is_contiguous({49, 49}, {56, 1}));
  CHECK(is_non_overlapping_and_dense({3, 5, 4}, {1, 12, 3}));
  CHECK_FALSE(is_non_overlapping_and_dense({49, 49}, {56, 1}));
  CHECK(is_channels_last({2, 3, 4, 5}, {60, 1, 15, 3}));
  CHECK(same_layout({1, 197, 768}, {768, 768, 1}, {151296, 768, 1}));
  CHECK_FALSE(same_layout({49, 49}, {56, 1}, {49, 1}));
}

TEST_CASE("layout: an elementwise result (TensorIterator) against the written input's strides") {
  const Operand odd{{1, 197, 768}, {768, 768, 1}};  // ViT-B/16's transpose_6
  const Operand row{{1, 197, 768}, {151296, 768, 1}};
  // aten.add.Tensor(transpose_6, add): both contiguous for torch, so a row-major result;
  // add_ keeps transpose_6's [768, 768, 1].
  CHECK(elementwise({odd, row}, {1, 197, 768}) == Sizes{151296, 768, 1});
  CHECK(elementwise({odd}, {1, 197, 768}) == Sizes{151296, 768, 1});  // relu
  CHECK(elementwise({odd, Operand{}}, {1, 197, 768}) == Sizes{768, 768, 1});  // add.Tensor(t, 1)
  CHECK(elementwise({{{3, 5, 4}, {1, 12, 3}}}, {3, 5, 4}) == Sizes{1, 12, 3});  // permuted: kept
  CHECK(elementwise({{{4, 5}, {10, 2}}}, {4, 5}) == Sizes{5, 1});  // gaps: dense
  CHECK(elementwise({{{4, 8}, {1, 6}}}, {4, 8}) == Sizes{1, 4});  // dense in the input's dim order
  CHECK(elementwise({{{4, 5}, {1, 4}}, {{5}, {1}}}, {4, 5}) == Sizes{1, 4});  // broadcast operand
}

TEST_CASE("layout: empty_like's preserve format and views") {
  CHECK(like({49, 49}, {56, 1}) == Sizes{49, 1});  // Swin-T's fill of a mask slice
  CHECK(like({1, 197, 768}, {768, 768, 1}) == Sizes{768, 768, 1});  // dense: kept, size-1 dims too
  CHECK(like({2, 8, 3, 6}, {288, 1, 96, 8}) == Sizes{144, 1, 48, 8});  // channels-last with gaps
  CHECK(view_strides({4, 6}, {6, 1}, {24}) == Sizes{1});
  CHECK(view_strides({6, 4}, {1, 6}, {24}) == std::nullopt);  // a transpose cannot be flattened
  CHECK(view_strides({1, 197, 768}, {768, 768, 1}, {197, 768}) == Sizes{768, 1});
}

TEST_CASE("layout: which rule the functional form of an in-place op follows") {
  CHECK(functional_layout("add", "Tensor") == FunctionalLayout::Elementwise);
  CHECK(functional_layout("relu", "") == FunctionalLayout::Elementwise);
  CHECK(functional_layout("fill", "Scalar") == FunctionalLayout::LikeSelf);
  CHECK(functional_layout("hardtanh", "") == FunctionalLayout::LikeSelf);
  CHECK(functional_layout("bernoulli", "Tensor") == FunctionalLayout::LikeSelf);
  CHECK(functional_layout("bernoulli", "p") == FunctionalLayout::RowMajor);
  CHECK(functional_layout("masked_fill", "Scalar") == FunctionalLayout::RowMajor);
  CHECK(functional_layout("copy", "") == FunctionalLayout::SameAsSelf);
}

}  // namespace
}  // namespace graft::layout
