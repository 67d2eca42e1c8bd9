-- attack: math.randomseed() without a seed reseeds from time and addresses: non-reproducible, leaks
--   entropy.
-- defense: the host seeds the generator; randomseed needs an explicit seed.
-- expect: math.randomseed needs a seed in the sandbox (the host seeds the generator)
math.randomseed()
