from nertz_env import nertz_v0

env = nertz_v0.env(num_players=4, render_mode="ansi")
env.reset(seed=42)

for agent in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None
    else:
        mask = observation["action_mask"]
        action = env.action_space(agent).sample(mask)  # a random legal action; your policy here
    env.step(action)
env.close()
