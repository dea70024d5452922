"""Adapters from ``nertz_v0`` to other frameworks' conventions.

Each adapter is its own module and imports its framework there only, so ``import nertz_env``
never needs them:

| module                          | framework                  | extra                          |
| ------------------------------- | -------------------------- | ------------------------------ |
| ``nertz_env.integrations.rllib`` | Ray RLlib (new API stack)  | ``pip install 'nertz-env[rllib]'`` |
| ``nertz_env.integrations.torchrl`` | TorchRL (native ``EnvBase``) | ``pip install 'nertz-env[torchrl]'`` |
| ``nertz_env.integrations.benchmarl`` | BenchMARL (a task)       | ``pip install 'nertz-env[benchmarl]'`` |
| ``nertz_env.integrations.supersuit`` | SuperSuit + sb3-contrib (masks) | ``pip install 'nertz-env[supersuit]'`` |
| ``nertz_env.integrations.openspiel`` | OpenSpiel (``python_nertz``) | ``pip install 'nertz-env[openspiel]'`` |

See docs/integrations.md for every library, these and those that take ``nertz_v0`` as it is.
"""
