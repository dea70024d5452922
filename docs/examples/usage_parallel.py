from nertz_env import nertz_v0

env = nertz_v0.parallel_env(num_players=4, render_mode="ansi")
observations, infos = env.reset(seed=42)

while env.agents:
    # a random legal action for every agent; your policy here
    actions = {agent: env.action_space(agent).sample(observations[agent]["action_mask"]) for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
print(env.outcome())  # the ended hand by name: end_reason, final_scores, callers
env.close()
