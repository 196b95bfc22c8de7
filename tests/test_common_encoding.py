"""DI-engine's encoders of ding.envs.common.common_function, with the values DI-engine's give."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the encoders work on torch tensors (the torch extra)")

from ding_env.common.common_function import (  # noqa: E402 - after the extra's check
    batch_binary_encode,
    clip_one_hot,
    div_func,
    div_one_hot,
    get_postion_vector,
    num_first_one_hot,
    one_hot,
    reorder_boolean_vector,
    reorder_one_hot,
    reorder_one_hot_array,
    sqrt_one_hot,
)


def test_one_hot_family():
    assert one_hot(torch.tensor([2, -1, 0]), 3).tolist() == [[0, 0, 1], [0, 0, 0], [1, 0, 0]]
    assert num_first_one_hot(torch.tensor([[2, 0]]), 3).shape == (3, 1, 2)
    assert sqrt_one_hot(torch.tensor([0, 4, 9, 100]), 10).argmax(-1).tolist() == [0, 2, 3, 3]
    assert sqrt_one_hot(torch.tensor([0]), 10).shape == (1, 4)
    assert div_one_hot(torch.tensor([0, 5, 12]), 10, 4).argmax(-1).tolist() == [0, 1, 2]
    assert clip_one_hot(torch.tensor([-3, 1, 9]), 3).argmax(-1).tolist() == [0, 1, 2]
    assert div_func(torch.tensor([2, 4]), 2.0).tolist() == [[1.0], [2.0]]
    with pytest.raises(ValueError, match=r"values must be in \[-1, 3\), got \[5\]"):
        one_hot(torch.tensor([5]), 3)
    with pytest.raises(TypeError, match="expected a long tensor"):
        one_hot(torch.tensor([1.0]), 3)


def test_reorder_and_binary_encoders():
    table = {10: 0, 20: 1, 30: 2}
    assert reorder_one_hot(torch.tensor([30, 10]), table, 3).argmax(-1).tolist() == [2, 0]
    transform = np.array([10, 20, 30])
    assert reorder_one_hot(torch.tensor([1]), table, 3, transform).argmax(-1).tolist() == [1]
    assert reorder_one_hot_array(torch.tensor([2, 0]), np.array([1, 2, 0]), 3).argmax(-1).tolist() == [0, 1]
    assert reorder_boolean_vector(torch.tensor([20, 30]), table, 4).tolist() == [0, 1, 1, 0]
    with pytest.raises(KeyError, match="value 40 .* is not in the reorder table"):
        reorder_one_hot(torch.tensor([40]), table, 3)
    assert batch_binary_encode(torch.tensor([[5, 2]]), 4).tolist() == [[[0, 1, 0, 1], [0, 0, 1, 0]]]
    position = get_postion_vector([1.0])
    assert (
        position.shape == (64,)
        and position[0] == pytest.approx(np.sin(1.0))
        and position[1] == pytest.approx(np.cos(1.0))
    )
