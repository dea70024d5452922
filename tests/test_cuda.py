"""The trainers and the networks on a CUDA device (``--device cuda``, and ``auto`` where one is
present); skipped, with the reason, on a machine without one. On the GPU the observation summary
takes the dense path (``body(obs * scale)``) where the CPU sums the weights of the nonzero entries;
both must give one function, and a policy trained on the GPU must be an ordinary CPU file."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: this checks --device cuda")

from conftest import mid_hand, scorer_nets  # noqa: E402

from nertz_env import agents  # noqa: E402
from nertz_env.agents.policy import load_network  # noqa: E402
from nertz_env.training.central_critic import CentralCritic  # noqa: E402
from nertz_env.training.checkpoint import training_device  # noqa: E402
from nertz_env.training.snapshots import StackedSnapshots  # noqa: E402
from nertz_env.training.train_selfplay import build, main, restore, start  # noqa: E402

SMALL = ["--num-envs", "4", "--num-steps", "8", "--eval-every", "0", "--progress", "false", "--threads", "1",
         "--lookahead-features", "false", "--scripted", "greedy", "--bc-steps", "80", "--snapshot-every", "2",
         "--tensorboard", "false", "--device", "cuda"]  # fmt: skip


@pytest.fixture(scope="module")
def tables():
    obs, masks = mid_hand()
    return obs.reshape(-1, obs.shape[-1]), masks.reshape(-1, masks.shape[-1])


def test_auto_is_the_gpu_where_torch_sees_one_and_a_wrong_device_is_named():
    assert training_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert training_device("cpu") == torch.device("cpu")
    for wrong in ("tpu", "gpu", "cuda:x", "meta"):
        with pytest.raises(ValueError, match=f"--device '{wrong}': accepted auto, cpu, cuda or cuda:N"):
            training_device(wrong)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without a GPU")
def test_cuda_without_a_gpu_is_a_clear_error_before_a_run_writes_anything(tmp_path):
    with pytest.raises(ValueError, match="--device cuda: torch sees no CUDA device here"):
        training_device("cuda")
    with pytest.raises(ValueError, match="no CUDA device"):
        main(SMALL + ["--total-steps", "320", "--run-dir", str(tmp_path / "run")])
    from nertz_env.training.train_sb3 import main as sb3_main

    with pytest.raises(ValueError, match="--device 'tpu': accepted auto, cpu, cuda or cuda:N"):
        sb3_main(["--device", "tpu", "--out-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())


@needs_cuda
def test_the_gpu_scores_every_move_as_the_cpu_does(tables):
    """The dense summary on the GPU and the sparse one on the CPU: the same logits and values."""
    obs, masks = tables
    net = scorer_nets(1, 0)[0]
    with torch.no_grad():
        cpu_logits, cpu_values = net(torch.from_numpy(obs), torch.from_numpy(masks))
        gpu_logits, gpu_values = net.to("cuda")(torch.from_numpy(obs).cuda(), torch.from_numpy(masks).cuda())
    assert gpu_logits.device.type == "cuda"
    torch.testing.assert_close(gpu_logits.cpu(), cpu_logits, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(gpu_values.cpu(), cpu_values, rtol=1e-4, atol=1e-4)


@needs_cuda
def test_stacked_snapshots_on_the_gpu_score_as_each_network_on_the_cpu(tables):
    obs, masks = tables
    nets = scorer_nets(3, 1)
    who = np.random.default_rng(1).integers(3, size=len(obs))
    cpu_scores = []
    rows, acts, feats = nets[0].features(obs, masks)
    for net in nets:
        with torch.no_grad():
            cpu_scores.append(net.pair_scores(*(torch.from_numpy(x) for x in (obs, rows, acts, feats)))[0])
    stacked = StackedSnapshots([net.to("cuda") for net in nets])
    scores = stacked.pair_scores(obs, who, rows, acts, feats)
    assert scores.device.type == "cuda"
    for i, own in enumerate(cpu_scores):
        mine = torch.from_numpy(who[rows] == i)
        torch.testing.assert_close(scores.cpu()[mine], own[mine], rtol=1e-4, atol=1e-4)


@needs_cuda
def test_the_central_critic_on_the_gpu_values_as_its_cpu_copy(tmp_path):
    args, _, _ = start(SMALL + ["--central-critic", "true", "--run-dir", str(tmp_path), "--total-steps", "4096"])
    t = build(args)
    restore(t, None)
    assert t.device.type == "cuda" and t.critic.device.type == "cuda"
    obs = torch.from_numpy(t.envs.reset()[0].reshape(-1, t.obs_dim)[t.seats.learn_idx])
    hidden = t.critic.hidden_cards(t.envs)
    on_gpu = t.critic.values(t.net, obs, hidden)
    t.net.to("cpu")
    t.critic.model.to("cpu")
    t.critic.device = torch.device("cpu")
    torch.testing.assert_close(on_gpu, t.critic.values(t.net, obs, hidden), rtol=1e-4, atol=1e-4)
    assert isinstance(t.critic, CentralCritic)


@needs_cuda
def test_a_gpu_run_resumes_as_one_and_saves_a_cpu_policy_that_plays(tmp_path, tables):
    """A run on the GPU, stopped and resumed, ends where an uninterrupted one ends; its policy file
    holds CPU tensors, and the agent made from it plays legal moves on a machine without a GPU."""
    common = SMALL + ["--central-critic", "true", "--total-steps", "320", "--save-every", "1"]
    main(common + ["--run-dir", str(tmp_path / "a")])
    main(common + ["--run-dir", str(tmp_path / "b"), "--stop-after", "2"])
    main(["--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false"])
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)
    assert a["update"] == b["update"] == 4
    for name, weight in a["net"].items():
        torch.testing.assert_close(b["net"][name], weight, rtol=0, atol=0)
    _, _, blob = load_network(tmp_path / "a" / "policy.pt")
    assert all(v.device.type == "cpu" for v in blob["state_dict"].values())
    obs, masks = tables
    moves = agents.make("policy", path=str(tmp_path / "a" / "policy.pt")).act_batch(obs, masks)
    assert masks[np.arange(len(obs)), moves].all()
