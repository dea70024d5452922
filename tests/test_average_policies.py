"""``training.average_policies``: the mean of a run's last kept policies, as one policy file that
plays, and clear errors for what cannot be averaged."""

import pytest

torch = pytest.importorskip("torch", reason="trained policies need torch (the training extra)")

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.agents.policy import build_scorer, load_network, save_policy  # noqa: E402
from nertz_env.training.average_policies import average, kept_policies, main  # noqa: E402


def _keep(run, decisions: int, seed: int, hidden=(16,), config=None, cycle=False, lookahead=False):
    torch.manual_seed(seed)
    config = config or NertzConfig()
    net = build_scorer(config, hidden, 8, lookahead=lookahead, cycle=cycle)
    path = run / "policies" / f"policy_{decisions:010d}.pt"
    return save_policy(path, net, config, hidden, extra={"global_step": decisions}, action_hidden=8)


def test_the_last_policies_average_weight_by_weight_and_play(tmp_path):
    files = [_keep(tmp_path, d, seed) for seed, d in enumerate((900, 1000, 1100))]
    assert kept_policies(tmp_path) == files  # by decisions, oldest first
    main([str(tmp_path), "--last", "2", "--out", str(tmp_path / "avg.pt")])
    net, _, blob = load_network(tmp_path / "avg.pt")
    older, newer = (load_network(f)[0].state_dict() for f in files[1:])
    for name, value in net.state_dict().items():
        torch.testing.assert_close(value, (older[name] + newer[name]) / 2)
    assert blob["extra"]["averaged"] == [str(f) for f in files[1:]] and blob["extra"]["global_step"] == 1100
    last = save_policy(tmp_path / "policy.pt", load_network(files[0])[0], NertzConfig(), (16,), action_hidden=8)
    main([str(tmp_path), "--last", "2", "--with-last", "--out", str(tmp_path / "avg_end.pt")])
    net, _, blob = load_network(tmp_path / "avg_end.pt")  # the newest kept policy and the run's end
    end = load_network(last)[0].state_dict()
    for name, value in net.state_dict().items():
        torch.testing.assert_close(value, (newer[name] + end[name]) / 2)
    assert blob["extra"]["averaged"] == [str(files[2]), str(last)]
    env_agent = agents.make("policy", path=str(tmp_path / "avg.pt"))
    from nertz_env.vector import NertzVectorEnv

    env = NertzVectorEnv(4, seed=1)
    obs, masks = env.reset()
    for _ in range(20):
        acts = env_agent.act_batch(obs.reshape(-1, obs.shape[-1]), masks.reshape(-1, masks.shape[-1]))
        assert masks.reshape(-1, masks.shape[-1])[range(len(acts)), acts].all()
        obs, masks, *_ = env.step(acts.reshape(4, -1))


def test_what_cannot_be_averaged_is_refused_with_the_reason(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path / "none"), "--out", str(tmp_path / "a.pt")])
    assert "no run directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--out", str(tmp_path / "a.pt")])
    assert "holds no kept policies" in capsys.readouterr().err
    _keep(tmp_path, 100, 0)
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--last", "3", "--out", str(tmp_path / "a.pt")])
    assert "keeps 1 policies, fewer than --last 3" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--last", "0", "--out", str(tmp_path / "a.pt")])
    assert "argument --last: expected an integer >= 1, got '0'" in capsys.readouterr().err
    other = _keep(tmp_path, 200, 1, hidden=(32,))
    with pytest.raises(ValueError, match="not the same network and rules"):
        average(kept_policies(tmp_path), tmp_path / "a.pt")
    other.unlink()
    other = _keep(tmp_path, 200, 1, cycle=True)  # the stock-cycle columns: a wider move layer
    with pytest.raises(ValueError, match="not the same network and rules"):
        average(kept_policies(tmp_path), tmp_path / "a.pt")
    other.unlink()
    _keep(tmp_path, 100, 0, lookahead=1)
    other = _keep(tmp_path, 200, 1, lookahead=3)  # the same shapes, another look-ahead depth read
    with pytest.raises(ValueError, match="not the same network and rules"):
        average(kept_policies(tmp_path), tmp_path / "a.pt")
    other.unlink()
    _keep(tmp_path, 100, 0)
    _keep(tmp_path, 200, 1, config=NertzConfig(num_players=3))
    with pytest.raises(ValueError, match="not the same network and rules"):
        average(kept_policies(tmp_path), tmp_path / "a.pt")
    assert not (tmp_path / "a.pt").exists()


def test_out_is_checked_before_any_work(tmp_path, capsys):
    """Before, a missing folder was created, ``.json`` accepted, a folder left ``<folder>.tmp``
    behind, and the run's own ``policy.pt`` (an input) was overwritten."""
    _keep(tmp_path, 100, 0)
    kept = _keep(tmp_path, 200, 1)
    last = save_policy(tmp_path / "policy.pt", load_network(kept)[0], NertzConfig(), (16,), action_hidden=8)
    before = last.read_bytes()
    (tmp_path / "folder.pt").mkdir()
    for out, said in (
        (tmp_path / "none" / "a.pt", "does not exist"),
        (tmp_path / "a.json", "must end in .pt"),
        (tmp_path / "folder.pt", "is a folder, not a file"),
        (last, "is one of the run's policies"),
        (kept, "is one of the run's policies"),
        (tmp_path / "policies" / "policy_0000000300.pt", "is one of the run's policies"),
    ):
        with pytest.raises(SystemExit) as stop:
            main([str(tmp_path), "--last", "2", "--with-last", "--out", str(out)])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and "argument --out" in err and said in err and err.count("\n") == 1, err
    assert not (tmp_path / "none").exists() and not (tmp_path / "folder.pt.tmp").exists()
    assert last.read_bytes() == before and len(kept_policies(tmp_path)) == 2


def test_a_final_policy_that_is_the_newest_kept_one_is_counted_once(tmp_path, capsys):
    """A run whose updates are a multiple of --keep-policy-every ends on a kept policy: its
    policy.pt repeats the newest policies/policy_*.pt, and --with-last averages it once."""
    files = [_keep(tmp_path, d, seed) for seed, d in enumerate((100, 200, 300))]
    save_policy(tmp_path / "policy.pt", load_network(files[-1])[0], NertzConfig(), (16,),
                extra={"global_step": 300}, action_hidden=8)  # fmt: skip
    main([str(tmp_path), "--last", "2", "--with-last", "--out", str(tmp_path / "avg.pt")])
    out = capsys.readouterr().out
    assert "policy.pt holds the weights of" in out and "counted once" in out
    assert out.splitlines()[-1].endswith(f"the mean of {files[1].name}, {files[2].name}")
    net, _, blob = load_network(tmp_path / "avg.pt")
    older, newer = (load_network(f)[0].state_dict() for f in files[1:])
    for name, value in net.state_dict().items():
        torch.testing.assert_close(value, (older[name] + newer[name]) / 2)
    assert blob["extra"]["averaged"] == [str(f) for f in files[1:]]
    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path), "--last", "4", "--with-last", "--out", str(tmp_path / "avg.pt")])
    assert stop.value.code == 2 and "keeps 3 policies, fewer than --last 4 (its policy.pt counted once)" in (
        capsys.readouterr().err
    )
