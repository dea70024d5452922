"""Adapters from ``nertz_v0`` to other frameworks' conventions.

Each adapter is its own module and imports its framework there only, so ``import nertz_env``
never needs them:

| module                          | framework                  | extra                          |
| ------------------------------- | -------------------------- | ------------------------------ |
| ``nertz_env.integrations.rllib`` | Ray RLlib (new API stack)  | ``pip install 'nertz-env[rllib]'`` |
"""
