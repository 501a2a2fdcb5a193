"""``dpol run``: one learner on a table or a named data set (layer L5).

:mod:`.pipeline` runs it whole, or in chunks for streams larger than memory
(:mod:`.chunked`). Beside it: what it scores and says (:mod:`.scores`), its checkpoints
(:mod:`.checkpoint`), the output folder published whole (:mod:`.output`) and its report
(:mod:`.report`).
"""
