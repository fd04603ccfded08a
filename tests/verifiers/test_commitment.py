"""guards: choice.py and _commitment.py: a letter counts only where the response commits to it.

The table is an outside red team's probes (written apart from the verifier, against its
module docstring only), kept where the verifier reads them as a careful reader does: a
letter discussed, ruled out, tabled, weighed under a condition, chosen by somebody else,
named as "answer B", or asked about is no choice (0.0); a letter chosen plainly, in
the forms models write, keeps its credit (1.0). Families the verifier still misreads
(retractions in new words, hidden text, quoted answer templates) are not in it: see the
README's "Multiple choice" section.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import GSM8K, score
from _support.verifier_rows import V as MATH
from rewardkit.verifiers.base import Context
from rewardkit.verifiers.choice import ChoiceVerifier

V = ChoiceVerifier()

CHEM = (
    "We need the element that is a noble gas. Noble gases sit in group 18 and have a full val"
    "ence shell, so they are chemically inert under ordinary conditions.\n\nLet me go through t"
    "he options one at a time.\n\n"
)
PHYS = (
    "The block slides down a 30 degree incline with kinetic friction coefficient 0.2. Along t"
    "he incline, a = g(sin 30 - 0.2 cos 30) = 9.8(0.5 - 0.173) = 3.2 m/s^2. After 2 s the spe"
    "ed is v = a t = 6.4 m/s, and the options give 4.9, 9.8, 6.4 and 3.2 m/s.\n\n"
)
BIO = (
    "The question asks which organelle is the main site of ATP synthesis in eukaryotic cells."
    " Oxidative phosphorylation happens on the inner mitochondrial membrane, where the electr"
    "on transport chain drives ATP synthase.\n\n"
)
THINK_T = (
    "Okay, let me work through this. The force balance along the incline gives a = 3.2 m/s^2,"
    " so v = 6.4 m/s after 2 s, which matches option (B). So the answer is B.\n</think>\n\n"
)

# (gold, response, expected score, family)
PROBES: list[tuple[str, str, float, str]] = [
    ('B', CHEM + "(A) Oxygen is highly reactive, so it is out.\n\n(B) is tempting, but it's a distractor: it is a halogen, not a noble gas.", 0.0, 'marked_letter_discussed'),
    ('B', CHEM + 'Option **B** is the classic distractor here, since it looks inert but forms compounds readily.', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'So (B) is out, since 9.8 m/s would need a frictionless incline.', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'Hence, we reject (B).', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'I would avoid (B): it drops the friction term entirely.', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'None of the options match exactly, although (B) comes closest. I cannot pick one with confidence.', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'None of the options is correct. (B) is the closest but it is still wrong.', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + "So the answer can't be (B).", 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'Given the friction term, the answer should not be **B**.', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'Whatever the answer is, it is certainly not going to be (B).', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'Let me tabulate:\n\n| Option | Verdict |\n|---|---|\n| (A) | consistent |\n| (B) | wrong |', 0.0, 'marked_letter_discussed'),
    ('B', CHEM + 'Summary of checks:\n\n- (A): satisfies the condition\n- (C): does not\n- (B): does not either', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + "La réponse n'est pas (B).", 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'Die Antwort ist sicher nicht (B).', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'La respuesta no puede ser (B).', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + '所以答案一定不是（B）。', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + "Let me double-check (B) once more; its assumption of a frictionless incline seems off, so I'll need to recompute.", 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'Comparing (A) and (B): (A) overestimates the friction, while (B) ignores it. Neither fits; let me recompute the acceleration.', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'Next, consider **B**. It assumes the block starts from rest at the top of a frictionless plane, which is not our setup.', 0.0, 'marked_letter_discussed'),
    ('B', BIO + "I initially leaned toward (B), but on reflection it's the Golgi, which packages proteins rather than making ATP. I'm not certain what the intended answer is.", 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'Why not (B)? Because it drops the cos term.', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + "What about (B)? I'm not sure yet; the numbers don't quite line up.", 0.0, 'marked_letter_discussed'),
    ('B', PHYS + '(A), (C) and (D) are plausible; **B** is definitely not.', 0.0, 'marked_letter_discussed'),
    ('B', PHYS + "The correct value isn't listed. For reference, the option closest to a frictionless result is (B).", 0.0, 'marked_letter_discussed'),
    ('B', PHYS + 'Verdicts:\n\nB) false', 0.0, 'option_line_verdict'),
    ('B', PHYS + 'Eliminating options as I go:\n\nB. Eliminated.', 0.0, 'option_line_verdict'),
    ('B', PHYS + 'Final check of the tempting one:\n\nB. ruled out', 0.0, 'option_line_verdict'),
    ('B', PHYS + 'After plugging in numbers:\n\n(B) ❌', 0.0, 'option_line_verdict'),
    ('B', PHYS + 'After plugging in numbers:\n\nB) ❌ too large', 0.0, 'option_line_verdict'),
    ('B', PHYS + 'Quick check of option B:\n\n(B) — false.', 0.0, 'option_line_verdict'),
    ('B', PHYS + 'Status of each claim:\n\n(B): False', 0.0, 'option_line_verdict'),
    ('B', PHYS + 'Assessment of option B:\n\nB. Not correct', 0.0, 'option_line_verdict'),
    ('B', PHYS + 'Reviewing:\n\nB) excluded by the friction term', 0.0, 'option_line_verdict'),
    ('B', PHYS + 'Reviewing:\n\n(B) ✗ incorrect', 0.0, 'option_line_verdict'),
    ('B', PHYS + "I wouldn't choose B, since it ignores friction.", 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + "Don't pick B; it ignores friction.", 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + 'Students often choose B because they forget the friction force.', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + "It's tempting to go with B, but that ignores friction. I'm not sure which of the others is right.", 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + 'If you select B, you are ignoring the friction term, which is a mistake.', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + 'One might select option B, but that would be a mistake.', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + 'A careless reader would pick B.', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + 'Nobody should choose B here.', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + "You'd pick B only if you misread the question as frictionless.", 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + "I'm hesitant to choose B without checking the friction coefficient again.", 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + 'I refuse to select B, because it contradicts the friction data.', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + "I was going to choose B, but I'm not confident enough to commit to any option.", 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + 'Should I go with B? Not without rechecking the normal force.', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + '选B是错误的，因为忽略了摩擦力。', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + '如果选B，就忽略了摩擦力。', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + '很多同学会选B，但这是错误的。', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + '因为有摩擦力，所以不能选B。', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + '我不会选B。', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + '别选B，它忽略了摩擦。', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + '千万不要选择B。', 0.0, 'choose_verb_not_asserted'),
    ('B', PHYS + 'Option B is the best distractor here: it is what you get if you forget friction.', 0.0, 'option_predicate_not_chosen'),
    ('B', PHYS + 'Option B is the answer to a different question (the frictionless case), not this one.', 0.0, 'option_predicate_not_chosen'),
    ('B', PHYS + "Option B is correct only if the incline is frictionless, which it isn't.", 0.0, 'option_predicate_not_chosen'),
    ('B', PHYS + 'Option B is right out, since it violates energy conservation.', 0.0, 'option_predicate_not_chosen'),
    ('B', PHYS + 'The correct option is B for the original textbook problem, but with the modified coefficient none of the options match.', 0.0, 'option_predicate_not_chosen'),
    ('B', PHYS + 'Option B is the answer a frictionless model would give; ours has friction, so I need to recompute.', 0.0, 'option_predicate_not_chosen'),
    ('B', PHYS + 'Option B is correct? No: it ignores friction.', 0.0, 'option_predicate_not_chosen'),
    ('B', PHYS + "I don't think the answer is B.", 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + 'I doubt the answer is B, given the friction.', 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + "It's unlikely that the answer is B.", 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + 'It is not true that the answer is B.', 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + 'One might think the answer is B, but that overlooks the friction term. I still need to redo the calculation.', 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + "Some claim the answer is B, but they're wrong.", 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + 'The solution manual says "the answer is B", but that\'s a typo; none of the options match my result.', 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + 'It would be a mistake to conclude that the answer is B.', 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + "There's no reason to believe the answer is B.", 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + 'We cannot conclude that the answer is B.', 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + 'Nothing supports the claim that the answer is B.', 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + "Perhaps the answer is B. I'm really not sure, and I can't verify it.", 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + 'So is the answer B, C, or something else? Let me recompute.', 0.0, 'answer_clause_not_asserted'),
    ('B', PHYS + "To get answer B, you'd need to forget the friction force.", 0.0, 'answer_as_noun_label'),
    ('B', PHYS + 'Answer B overlooks friction entirely, so it can be dismissed.', 0.0, 'answer_as_noun_label'),
    ('B', PHYS + 'Answer B would require an infinite mass.', 0.0, 'answer_as_noun_label'),
    ('B', PHYS + 'Many students answer B here, which is wrong.', 0.0, 'answer_as_noun_label'),
    ('B', PHYS + "The expected answer is B, but the reasoning above shows it's impossible.", 0.0, 'answer_as_noun_label'),
    ('B', PHYS + 'Answer: (B) is a trap.', 0.0, 'answer_as_noun_label'),
    ('B', PHYS + "The final answer is not what the key says; the key's $\\text{(B)}$ is wrong.", 0.0, 'answer_as_noun_label'),
    ('B', PHYS + 'Writing \\boxed{B} would be wrong here, because it ignores friction.', 0.0, 'answer_as_noun_label'),
    ('B', PHYS + '$\\boxed{B}$ is not the answer.', 0.0, 'answer_as_noun_label'),
    ('B', PHYS + '\\boxed{B \\text{ is incorrect}}', 0.0, 'answer_as_noun_label'),
    ('B', PHYS + 'The answer is B only if the incline is frictionless, which it is not.', 0.0, 'conditional_or_counterfactual'),
    ('B', PHYS + 'Assuming no friction, the answer is B; but the problem clearly has friction, so I need to redo this.', 0.0, 'conditional_or_counterfactual'),
    ('B', PHYS + "Had the coefficient been zero, I'd choose B.", 0.0, 'conditional_or_counterfactual'),
    ('B', PHYS + "The answer is B.\n\nScratch that — I misread the angle. Recomputing gives a value I can't match to any option.", 0.0, 'retraction_not_recognised'),
    ('B', PHYS + 'Let me reconsider option (B). Its claim that the speed doubles', 0.0, 'truncated_mid_reasoning'),
    ('B', PHYS + 'Step 4: Evaluate (B).\nThe statement in (B) says that the acceleration', 0.0, 'truncated_mid_reasoning'),
    ('B', CHEM + '**A**: Oxygen reacts with almost everything. False.\n\n**B**: Fluorine is the most electronegative', 0.0, 'truncated_mid_reasoning'),
    ('B', PHYS + 'After evaluating all options, the tentative answer is option (B), but I still have to check the normal force component, which', 0.0, 'truncated_mid_reasoning'),
    ('B', PHYS + 'The answer is B with 20% probability and C with 80%.', 0.0, 'tentative_or_probabilistic'),
    ('B', PHYS + 'Answer: B (placeholder, not verified)', 0.0, 'tentative_or_probabilistic'),
    ('B', PHYS + 'The answer is B, C, or D; I can only rule out A.', 0.0, 'tentative_or_probabilistic'),
    ('A', PHYS + "The answer is A bit more subtle than it looks; I'm not sure yet.", 0.0, 'article_or_pronoun_as_letter'),
    ('A', PHYS + "Answer: A lot depends on the assumptions, so I can't choose.", 0.0, 'article_or_pronoun_as_letter'),
    ('I', PHYS + 'The answer is I think (C).', 0.0, 'article_or_pronoun_as_letter'),
    ('I', PHYS + 'The answer is I believe C.', 0.0, 'article_or_pronoun_as_letter'),
    ('I', PHYS + "Answer: I don't know.", 0.0, 'article_or_pronoun_as_letter'),
    ('I', PHYS + 'Answer: I am not able to decide between the options.', 0.0, 'article_or_pronoun_as_letter'),
    ('A', PHYS + "The answer is A function of the friction coefficient, which isn't given. Insufficient data.", 0.0, 'article_or_pronoun_as_letter'),
    ('B', PHYS + 'The answer is B through D.', 0.0, 'letter_range'),
    ('B', PHYS + 'The answer is (B) to (D).', 0.0, 'letter_range'),
    ('B', PHYS + 'The answer lies somewhere from B up to D.', 0.0, 'letter_range'),
    ('B', PHYS + "Answer: <del>B</del> I don't know.", 0.0, 'hidden_or_struck_text'),
    ('B', CHEM + 'To recap, the question was: Which is a noble gas? (A) Oxygen (B) Neon', 0.0, 'options_restated'),
    ('B', CHEM + 'Let me re-read the options.\n(A) Oxygen\n(B) Neon\n(C) Nitrogen\n(D) Hydrogen', 0.0, 'options_restated'),
    ('B', PHYS + 'Let me now check the next candidate:\n\n**B**', 0.0, 'lone_letter_not_answer'),
    ('B', PHYS + 'Options eliminated so far:\n\nB', 0.0, 'lone_letter_not_answer'),
    ('B', PHYS + 'The remaining option to examine is\n\n(B)', 0.0, 'lone_letter_not_answer'),
    ('B', PHYS + 'The only option I have not checked yet is\nB', 0.0, 'lone_letter_not_answer'),
    ('B', PHYS + "Answer: C\n\nLet me examine answer choice B more closely; it assumes no friction, which is why it's wrong.", 0.0, 'later_answer_noun_overrides_real_answer'),
    ('B', PHYS + 'Answer: C\n\nHowever, answer choice B assumes no friction; if we take answer B instead, the speed doubles.', 0.0, 'later_answer_noun_overrides_real_answer'),
    ('B', PHYS + 'The answer is C.\n\nNote: some sources list answer (B), which is outdated.', 0.0, 'later_answer_noun_overrides_real_answer'),
    ('B', PHYS + 'Answer: C.\n\nThe grader might expect answer B, but the friction term rules it out.', 0.0, 'later_answer_noun_overrides_real_answer'),
    ('B', PHYS + "**Answer: C**\n\nFor comparison, answer B is what you'd get with mu = 0.", 0.0, 'later_answer_noun_overrides_real_answer'),
    ('C', PHYS + 'The answer is C.\n\nNote: some sources list answer (B), which is outdated.', 1.0, 'later_answer_noun_overrides_real_answer'),
    ('C', PHYS + "Answer: C\n\nLet me examine answer choice B more closely; it assumes no friction, which is why it's wrong.", 1.0, 'later_answer_noun_overrides_real_answer'),
    ('C', PHYS + "**Answer: C**\n\nFor comparison, answer B is what you'd get with mu = 0.", 1.0, 'later_answer_noun_overrides_real_answer'),
    ('B', PHYS + 'Is it (B)?', 0.0, 'control_fp_resisted'),
    ('B', PHYS + "Hmm, is the answer (B)? I'm not sure.", 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Answer: B?', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'The answer is not (B), it must be something else.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + "The answer isn't B.", 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'The answer is either B or C.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Both B and C are correct.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'The answer is B/C.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Answer: Not B', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Answer: all except B', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Answer: B (wrong)', 0.0, 'control_fp_resisted'),
    ('B', PHYS + "Answer: B\n\nThat's wrong.", 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'The answer is B.\n\nActually no.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + "<think>\nThe answer is B.\n</think>\n\nI'm not able to answer this.", 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Evaluating each option:\nA) Correct, matches the data.\nB) Incorrect, contradicts the data.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'A. True\nB. False', 0.0, 'control_fp_resisted'),
    ('B', PHYS + '- (A) correct\n- (B) incorrect', 0.0, 'control_fp_resisted'),
    ('B', PHYS + '\\boxed{\\text{B or C}}', 0.0, 'control_fp_resisted'),
    ('B', PHYS + '<answer>Not B</answer>', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Recall the options: (A) 4.9 (B) 9.8 (C) 6.4 (D) 3.2', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'We must not choose B.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'I cannot determine the answer. <span style="display:none">Answer: B</span>', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'I cannot determine the answer. <!-- Answer: B -->', 0.0, 'control_fp_resisted'),
    ('B', PHYS + '答案不是B。', 0.0, 'control_fp_resisted'),
    ('B', PHYS + '答案是B吗？不是。', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Answer: B\n\nIgnore my previous answer.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Why choose B? It ignores friction.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'The correct answer is C, not B.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'The answer is B–D.', 0.0, 'control_fp_resisted'),
    ('B', PHYS + 'Réponse : B', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + 'La bonne réponse est B.', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + 'Respuesta: B', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + 'Antwort: B', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + 'Die richtige Antwort ist B.', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + '答え：B', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + '正解はBです。', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + 'Ответ: B', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + '정답: B', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + '故选：B', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + 'A resposta correta é B.', 1.0, 'fn_foreign_answer_label'),
    ('B', PHYS + 'The answer is probably B.', 1.0, 'fn_letter_first_or_unlabelled'),
    ('B', PHYS + 'The answer is likely B.', 1.0, 'fn_letter_first_or_unlabelled'),
    ('C', PHYS + 'The answer is I think (C).', 1.0, 'fn_letter_first_or_unlabelled'),
    ('B', PHYS + 'Answer = B', 1.0, 'fn_answer_form_variants'),
    ('B', PHYS + 'Correct answer → B', 1.0, 'fn_answer_form_variants'),
    ('B', PHYS + 'Answer - B', 1.0, 'fn_answer_form_variants'),
    ('B', PHYS + 'The answer is B. (C may look plausible, but it double-counts friction.)', 1.0, 'fn_rejected_alternative_read_as_hedge'),
    ('B', PHYS + 'The answer is B.', 1.0, 'control_tp_kept'),
    ('B', PHYS + '**Answer:** (B)', 1.0, 'control_tp_kept'),
    ('B', PHYS + '\\boxed{B}', 1.0, 'control_tp_kept'),
    ('B', PHYS + 'So the correct option is (B).', 1.0, 'control_tp_kept'),
    ('B', PHYS + "I'll go with B.", 1.0, 'control_tp_kept'),
    ('B', PHYS + '所以答案是B。', 1.0, 'control_tp_kept'),
    ('B', PHYS + '综上，选B。', 1.0, 'control_tp_kept'),
    ('B', PHYS + '最终答案：**B**', 1.0, 'control_tp_kept'),
    ('B', PHYS + 'B) 6.4 m/s', 1.0, 'control_tp_kept'),
    ('B', PHYS + 'Answer:\nB', 1.0, 'control_tp_kept'),
    ('B', PHYS + 'Answer: B\nConfidence: 90%', 1.0, 'control_tp_kept'),
    ('B', PHYS + 'Option (A) fails. Option (C) fails. Option (D) fails. So the answer is (B).', 1.0, 'control_tp_kept'),
    ('B', PHYS + 'The answer is B, not C.', 1.0, 'control_tp_kept'),
    ('B', PHYS + 'Answer: B. (A) is wrong because it ignores the angle, (C) double-counts.', 1.0, 'control_tp_kept'),
    ('B', PHYS + 'The answer is **B**.\n\n**Why the others are wrong:**\n- **A** ignores friction.\n- **C** double counts.\n- **D** has wrong units.', 1.0, 'control_tp_kept'),
    ('B', PHYS + 'Answer: ~~A~~ B', 1.0, 'control_tp_kept'),
    ('B', PHYS + '<answer>B</answer>', 1.0, 'control_tp_kept'),
    ('B', PHYS + '\\boxed{\\text{(B) 6.4 m/s}}', 1.0, 'control_tp_kept'),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "response", "expected", "family"), PROBES)
def test_a_letter_counts_only_where_it_is_chosen(
    gold: str, response: str, expected: float, family: str
) -> None:
    verdict = V.quick_check(V.extract(response), gold)
    assert verdict.score == expected, (family, V.extract(response))


# With the prompt's options at hand, the words after a letter are its option's text or
# a judgement of it: "(B) Neon." restates, "(B) overestimates the effect." judges
_PROMPT = "Which element is a noble gas?\n(A) Oxygen\n(B) Neon\n(C) Chlorine\n(D) Iron"


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Of the four, only one has a full shell.\n\nSo (B) Neon.", 1.0),
        ("Of the four, only one has a full shell.\n\n(B) Neon", 1.0),
        ("Only one has a full shell. So **B** (Neon).", 1.0),
        ("Oxygen reacts readily.\n\n(B) overestimates the stability of the shell.", 0.0),
        ("Oxygen reacts readily.\n\n(B) forms compounds readily.", 0.0),
        ("Oxygen reacts readily.\n\nB) false", 0.0),
    ],
)
def test_an_options_text_after_its_letter_is_read_from_the_prompt(
    response: str, expected: float
) -> None:
    extracted = V.extract(response, Context.of(_PROMPT, None))
    assert V.quick_check(extracted, "B").score == expected, extracted


# The stated-answer rule in math and gsm8k: an answer line in a clause that denies, doubts
# or reports it answers nothing; the same line asserted keeps its credit
@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("I don't think the answer is 7.", 0.0),
        ("Some claim the answer is 7, but they are wrong.", 0.0),
        ("I doubt the answer is $7$.", 0.0),
        ("One might think the answer is 7.", 0.0),
        ("I'm not sure the answer is 7.", 0.0),
        ("So the answer is 7.", 1.0),
        ("If we add them all, the answer is 7.", 1.0),
    ],
)
def test_a_value_stated_in_a_clause_that_undercuts_it_is_no_answer(
    statement: str, expected: float
) -> None:
    response = f"We add the numbers.\n\n{statement}"
    assert score(MATH, response, "7") == expected
    assert score(GSM8K, response, "7") == expected


# A value the fallback reading would take (math's passage, gsm8k's last number, a printed
# result restated) that the conclusion only weighs is no answer; a word problem's own
# words ("single-elimination", "test scores", "to the nearest") weigh nothing
@pytest.mark.parametrize(
    ("conclusion", "expected"),
    [
        ("We can rule out 220.", 0.0),
        ("Let us check $220$: it fails the second condition.", 0.0),
        ("Students often choose 220, but that misreads the question.", 0.0),
        ("220 is the classic distractor here.", 0.0),
        ("$220$ overlooks the second condition entirely.", 0.0),
        ("Is it 220? I cannot tell.", 0.0),
        ("So she pays 220 dollars.", 1.0),
        ("The mean of the test scores to the nearest whole number is 220.", 1.0),
        ("A single-elimination tournament needs 220 games.", 1.0),
        ("The Doubtfire family now has $220$ kittens.", 1.0),
    ],
)
def test_a_value_the_conclusion_only_weighs_is_no_answer(conclusion: str, expected: float) -> None:
    response = f"Each box costs 20 and she buys 11, so 20 * 11 = 220.\n\n{conclusion}"
    assert score(MATH, response, "220") == expected
    assert score(GSM8K, response, "220") == expected
    printed = f"```python\nprint(20 * 11)\n```\n```output\n220\n```\n{conclusion}"
    assert score(GSM8K, printed, "220") == expected


# The value read after an answer lead-in that ends its line is a sentence of its own when
# words after it judge it; and a value in LaTeX written outside math mode ("\frac{2}{3}",
# "105^\circ", "2s") is weighed as a whole, not as the number a reader takes from it
@pytest.mark.parametrize(
    ("gold", "conclusion", "expected"),
    [
        (
            "4\\sqrt{5}",
            "Therefore, the answer is\n\n$4\\sqrt{5}$ is the classic distractor here.",
            0.0,
        ),
        (
            "71",
            "Therefore, the final answer is:\n\n71 overlooks the second condition entirely.",
            0.0,
        ),
        ("(9, 1, -5)", "So the answer is\n\n$(9, 1, -5)$ is the classic distractor here.", 0.0),
        ("\\frac{2}{3}", "\\frac{2}{3} is the classic distractor here.", 0.0),
        ("105^\\circ", "Let us check 105^\\circ: it fails the second condition.", 0.0),
        ("180\\text{ miles}", "We can rule out 180\\text{ miles}.", 0.0),
        ("20\\%", "Students often choose 20\\%, but that misreads the question.", 0.0),
        ("2s", "2s is the classic distractor here.", 0.0),
        ("9\\text{ min}", "I don't think the answer is 9\\text{ min}.", 0.0),
        ("9\\text{ min}", "I don't think the answer is $9\\text{ min}$.", 0.0),
        # the same values given
        ("4\\sqrt{5}", "Therefore, the answer is\n\n$4\\sqrt{5}$", 1.0),
        ("4\\sqrt{5}", "The final answer is:\n\n$4\\sqrt{5}$ is the length of the diagonal.", 1.0),
        ("\\frac{2}{3}", "So the probability is \\frac{2}{3}.", 1.0),
        ("9\\text{ min}", "So the answer is $9\\text{ min}$.", 1.0),
    ],
)
def test_a_value_judged_in_its_own_sentence_is_no_answer(
    gold: str, conclusion: str, expected: float
) -> None:
    assert score(MATH, f"We work it out step by step.\n\n{conclusion}", gold) == expected


# An answer whose value the last sentence after it takes back (ruled out, judged, reported)
# is no answer; a check of it, a question answered, another value ruled out, or a
# rejection limited or taken back keeps it. (A value called "wrong" is test_disavowal's.)
@pytest.mark.parametrize(
    ("answered", "after", "expected"),
    [
        ("The final answer is $\\boxed{18}$.", "We can rule out 18.", 0.0),
        ("The final answer is $\\boxed{18}$.", "18 is the classic distractor here.", 0.0),
        (
            "The final answer is $\\boxed{18}$.",
            "Let us check 18: it fails the second condition.",
            0.0,
        ),
        ("Answer: 18", "Students often choose 18, but that misreads the question.", 0.0),
        ("#### 18", "$18$ overlooks the second condition entirely.", 0.0),
        ("The final answer is $\\boxed{18}$.", "Let's check: $2 \\times 9 = 18$.", 1.0),
        ("The final answer is $\\boxed{18}$.", "Is 18 right? Yes.", 1.0),
        ("The final answer is $\\boxed{18}$.", "Note that 20 is a common distractor.", 1.0),
        (
            "The final answer is $\\boxed{18}$.",
            "Students often choose 20, but that misreads it.",
            1.0,
        ),
        ("The final answer is $\\boxed{18}$.", "18 fails only if we drop the sign.", 1.0),
        ("The final answer is $\\boxed{18}$.", "We can rule out 18. Never mind, it holds.", 1.0),
        ("The answer is 18.", "It could be 18.0 as well.", 1.0),
        # an outside red team's: a rejection negated, or the value affirmed, keeps it
        ("The final answer is $\\boxed{18}$.", "There is no doubt that 18 is right.", 1.0),
        ("The final answer is $\\boxed{18}$.", "We cannot rule out 18, so it stands.", 1.0),
        (
            "The final answer is $\\boxed{18}$.",
            "Students often choose 18, and they are right.",
            1.0,
        ),
        ("The final answer is $\\boxed{18}$.", "18 fails none of the conditions.", 1.0),
        (
            "The final answer is $\\boxed{18}$.",
            "I initially doubted 18, but the check confirms it.",
            1.0,
        ),
        ("The answer is $\\boxed{18}$.", "Had each held 10, we'd get 20; they hold 9, so 18.", 1.0),
        # ruled out in the passive, or a red herring
        ("The final answer is $\\boxed{18}$.", "18 can be ruled out.", 0.0),
        ("The final answer is $\\boxed{18}$.", "18 has been eliminated.", 0.0),
        ("The final answer is $\\boxed{18}$.", "18 is a red herring.", 0.0),
        ("The final answer is $\\boxed{18}$.", "20 can be ruled out.", 1.0),
        # called wrong after a correction cue: both families read it (gsm8k credited it)
        ("#### 18", "Scratch that, 18 is wrong.", 0.0),
        ("The final answer is $\\boxed{18}$.", "On reflection, $18$ is incorrect.", 0.0),
        ("The answer is 18.", "Sorry, 18 is wrong.", 0.0),
        ("#### 18", "On second thought, 18 dollars.", 1.0),
        # a wrong answer, then the gold called wrong: the gold was never given (math
        # credited these, reading "Scratch that, $18$" as a correction to 18)
        ("#### 17", "Scratch that, $18$ is incorrect.", 0.0),
        ("#### 17", "Scratch that, 18 is not right.", 0.0),
        # another value called wrong after the cue: ruled out, no correction to it (the
        # gsm8k family scored the first 0, the math family the second)
        ("#### 18", "Scratch that, 17 is wrong.", 1.0),
        ("The final answer is $\\boxed{18}$.", "On reflection, $17$ is incorrect.", 1.0),
        ("The answer is 18.", "Hmm, 180 can't be right.", 1.0),
        # the answer denied in other words (an outside red team's "negated answer" rows,
        # each credited before: "18 is not the correct answer" also lost its words to
        # the rule that drops a label disowning its value, "Not the answer: 18", though
        # no value followed its label)
        ("The final answer is $\\boxed{18}$.", "The answer isn't 18.", 0.0),
        ("The final answer is $\\boxed{18}$.", "The answer can't be 18.", 0.0),
        ("The final answer is $\\boxed{18}$.", "18 is not the answer.", 0.0),
        ("#### 18", "18 is not the correct answer.", 0.0),
        ("The answer is 18.", "That's not the answer.", 0.0),
        ("The final answer is $\\boxed{18}$.", "17 is not the answer.", 1.0),
        ("The answer is 18.", "The answer can't be 17, so it is 18.", 1.0),
        # a chat's closing courtesy after the rejection says nothing more (an outside red
        # team's "filler after" rows, each credited before)
        ("The final answer is $\\boxed{18}$.", "We can rule out 18. Hope this helps!", 0.0),
        ("#### 18", "18 is the classic distractor here. Thanks for reading.", 0.0),
        ("The answer is 18.", "We can rule out 18. Let me know if you have questions.", 0.0),
        ("The answer is 18.", "We can rule out 17. Hope this helps!", 1.0),
        ("The final answer is $\\boxed{18}$.", "Let's check: $2 \\times 9 = 18$. Thanks!", 1.0),
        ("The answer is $\\boxed{18}$.", "We can rule out 18. Never mind, it holds. Thanks!", 1.0),
        # a sentence that opens "Not", "It's not", "It can't be" denies the value it names
        # first: the answer (each credited before), or another value, ruled out (the math
        # family read "It is not 17." as 17 given last, and scored it 0)
        ("The final answer is $\\boxed{18}$.", "Not 18.", 0.0),
        ("The answer is 18.", "It's definitely not 18.", 0.0),
        ("The answer is 18.", "It's not 18 but 19.", 0.0),
        ("The final answer is $\\boxed{18}$.", "Not 18, but 19.", 0.0),
        ("The final answer is $\\boxed{18}$.", "It cannot be 18 or 19.", 0.0),
        ("The answer is $\\boxed{18}$.", "The answer is not $\\boxed{18}$.", 0.0),
        ("The final answer is $\\boxed{18}$.", "It is not 17.", 1.0),
        ("The answer is 18.", "Not 17, of course.", 1.0),
        ("The final answer is $\\boxed{18}$.", "It cannot be 17 or 19.", 1.0),
        ("The answer is 18.", "It is not hard to see that 18 works.", 1.0),
        ("The final answer is $\\boxed{18}$.", "It can't be anything other than 18.", 1.0),
        # the answer's own check disowned ("That's not right." after the answer named last,
        # though other values came before it), or the answer retracted in words
        ("The final answer is $\\boxed{18}$.", "Let's check: 2*9 = 18. No, that's wrong.", 0.0),
        ("The answer is 18.", "We have 9 boxes of 2, so 18. That is not right.", 0.0),
        ("The final answer is $\\boxed{18}$.", "I retract this answer.", 0.0),
        ("The final answer is $\\boxed{18}$.", "One might say 2+9 = 11. That's wrong.", 1.0),
        ("The final answer is $\\boxed{18}$.", "Check: 9 + 9 = 18. That checks out.", 1.0),
    ],
)
def test_an_answer_the_last_sentence_takes_back_is_no_answer(
    answered: str, after: str, expected: float
) -> None:
    response = f"Each box costs 2 and she buys 9, so 2 * 9 = 18.\n\n{answered}\n\n{after}"
    assert score(MATH, response, "18") == expected
    assert score(GSM8K, response, "18") == expected


def test_a_value_taken_back_after_an_answer_in_another_form_goes_to_the_check() -> None:
    """``\\frac{1}{4}`` cannot be told from ``2^{-2}`` inline: the check compares it."""
    response = "So the answer is $2^{-2}$.\n\nWe can rule out $\\frac{1}{4}$."
    assert score(MATH, response, "\\frac{1}{4}") == 0.0
    assert score(MATH, response.replace("We can rule out", "So"), "\\frac{1}{4}") == 1.0
    # "18 is wrong" is no number with a unit: another value offered, as before the rule
    scratched = "So 2 * 9 = 18.\n\nThe answer is $\\boxed{18}$.\n\nScratch that, 18 is wrong."
    assert score(MATH, scratched, "18") == 0.0
