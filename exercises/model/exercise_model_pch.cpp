// exercises/model/exercise_model_pch: the one source of the precompiled Relacy header every
// exercise model reuses (exercise_model.cmake; issue 42). It compiles nothing of its own.
