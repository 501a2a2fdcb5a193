"""``dpol run``: one learner on a table or a named data set (layer L5).

:mod:`.pipeline` runs it: the arguments checked (:mod:`.request`), then the stages of
:mod:`.stages` in turn — read → bounds and scaling → learner → scores → outputs — or the
same in chunks, for streams larger than memory (:mod:`.chunked`). Beside them: what a
run scores and says (:mod:`.scores`), its checkpoints (:mod:`.checkpoint`), the output
folder published whole (:mod:`.output`) and its report (:mod:`.report`).
"""
