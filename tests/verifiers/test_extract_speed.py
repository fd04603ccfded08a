r"""guards: the extraction speed-ups (_common, _answer, gsm8k) change no output.

extract + quick_check got faster without changing one output: the proofs.

The speed-ups are of two kinds, each proved here:

* a lookahead put first in a pattern, true wherever a match can begin
  (``_common.OFFER_CUE_AHEAD``, ``CORRECTION_CUE_AHEAD``, ``VALUE_AHEAD``, ``(?=[-.\d])``):
  re then passes over the other positions without trying every branch. The patterns as
  they were are kept below as literals; old and new give the same spans and groups on
  every text the corpus hands them and on a hypothesis fuzz over the characters that
  matter (cue words in several cases and scripts, ``İıſK``, digits, ``$``, ``\(``...);
* a gate that skips a regex where it cannot match (``gsm8k._may_mark``,
  ``_common.may_offer_predicate``): where the gate says no, the old pattern finds nothing,
  on the corpus and on the fuzz.

And end to end: every corpus row through extract + quick_check of the math (default,
strict) and gsm8k (auto, strict, flexible) verifiers, in a child process on the tree
before the change (/work/wt/base/src when it is at BASE_COMMIT, else ``git archive`` of
BASE_COMMIT) and in one
on this tree: the reprs of every Extracted and Verdict are equal.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rewardkit.verifiers import _answer, _common, _final, gsm8k

ROOT = Path(__file__).resolve().parents[2]
# the tree before the latest speed change (the answer-form and refusal lookaheads, the
# dangling-sentence gate): its outputs are the reference. A rule that changes outputs by
# design moves this base to its own commit once it lands, so that speed work is always
# compared with the behaviour it must keep, and nothing else.
BASE_COMMIT = "a1b276f6a7f27ce9dacf1c3274099b7e426d1c91"
BASE_SRC = Path("/work/wt/base/src")  # a checkout of it, where there is one

# The patterns without their lookaheads, exactly as they compile (pattern, flags); the
# correction and offer cues as the final-answer rule (issue 26) extended them, with the
# correction words of other phrasings and languages added since
OLD: dict[str, tuple[str, int]] = {
    "_answer._CUED": (
        "(?:\\b(?i:could|might|may)(?:[ \\t]+(?i:also|even|well|actually|instead|equally|poss"
        "ibly))?[ \\t]+(?i:be)(?:[ \\t]+(?i:also|even))?|(?:^[ \\t$*)\\\\}]{0,4}[ \\t]*(?:(?i"
        ":or|o|u|sau|tai|hay)(?![^\\W\\d_])|(?:(?i:vs\\.?|versus|oder|ou|eller|lub|albo|nebo|"
        "alebo|vagy|veya|atau|hoặc|или|або|ή|أو|או|या)(?![^\\W\\d_])|또는|혹은|または|もしくは|或者?|[还還]是"
        "))|[.,;:!?\\n()\\[\\u2013\\u2014\\u2026-][ \\t]*(?:(?i:or)|(?:(?i:vs\\.?|versus|oder"
        "|ou|eller|lub|albo|nebo|alebo|vagy|veya|atau|hoặc|или|або|ή|أو|או|या)(?![^\\W\\d_])|"
        "또는|혹은|または|もしくは|或者?|[还還]是)))(?:[ \\t]+(?i:maybe|perhaps|possibly|else|even|rather|alt"
        "ernatively))?|\\b(?i:maybe|perhaps|possibly|alternatively|alternately|otherwise|conc"
        "eivably)|\\b(?i:another|other|alternative|second)(?:[ \\t]+(?i:possible|valid|plausi"
        "ble|potential|acceptable|correct))?[ \\t]+(?i:answer|value|solution|option|choice|po"
        "ssibility|candidate)s?(?:[ \\t]+(?i:is|would[ \\t]+be|could[ \\t]+be|might[ \\t]+be)"
        ")?|\\b(?i:unless)[ \\t]+(?i:it(?:'s|[ \\t]+is)|the[ \\t]+answer[ \\t]+is)|\\((?i:if|"
        "when|assuming|rounding|rounded)\\b[^()\\n]{0,40}?[,:]|(?:^|[.!?][ \\t]{1,3})(?i:if|w"
        "hen|assuming)\\b[^.,;()\\n]{1,40}[,:](?=[ \\t]{1,3}(?:\\\\?\\$)?(?:-?\\d[\\d,.]*|\\("
        "?[A-J]\\)?)\\$?[ \\t]*(?:[.!?)]|$))|(?:^|(?<=[\\n.!?;]))[ \\t*>]{0,3}(?=[aAoOrRsSvVc"
        "CjJоОвВαΑתاउ答解정đĐ])(?:\\b(?i:antwort|réponse|respuesta|risposta|resposta|antwoord|sv"
        "ar|vastaus|odpowiedź|odpověď|válasz|răspuns|cevap|jawaban|ответ|відповідь|απάντηση|ת"
        "שובה|الإجابة|الجواب|उत्तर)\\b|答案|答え|解答|정답|(?i:đáp án))[ \\t]{0,3}(?=:)|\\b(?:(?i:act"
        "ually|wait|no(?=[ \\t]*[,:;!.\\u2014-])|sorry|oops|correction|i[ \\t]+mean|i[ \\t]+m"
        "eant|make[ \\t]+that|scratch[ \\t]+that|on[ \\t]+second[ \\t]+thought|(?:up)?on[ \\t"
        "]+(?:further[ \\t]+|second[ \\t]+)?reflection|hmm+|hold[ \\t]+on|let[ \\t]+me[ \\t]+"
        "(?:re-?check|reconsider|correct[ \\t]+(?:that|myself))|never[ \\t]*mind|(?:edit|upda"
        "te|erratum|typo)(?=[ \\t]*[:,.)])|my[ \\t]+bad|whoops|err(?=[ \\t]*[,.])|(?:strike|d"
        "isregard|ignore)[ \\t]+(?:that|this|the[ \\t]+above)|i[ \\t]+was[ \\t]+wrong|(?:that"
        "|this)[ \\t]+was[ \\t]+(?:a[ \\t]+)?(?:mistake|wrong|an[ \\t]+error)|re-?checking(?:"
        "[ \\t]+(?:gives|shows|yields))?|attendez|attends|en[ \\t]+fait|non(?=[ \\t]*[,:;!.])"
        "|oups|espera|en[ \\t]+realidad|perd[oó]n|warte|eigentlich|nein(?=[ \\t]*[,:;!.])|kor"
        "rektur|na[ \\t]+verdade|aspetta|in[ \\t]+realt[àa]|подожди(?:те)?|на[ \\t]+самом[ \\"
        "t]+деле|нет(?=[ \\t]*[,:;!.])|исправление)|等等|等一下|其实是?|其實是?|不对|不對|更正|应该是|應該是|而是|待って|"
        "いいえ|実は|訂正|잠깐|사실은?)(?:[ \\t]*[,:;!.\\u2014\\uff0c\\u3001-]?[ \\t]*\\b(?:(?:(?i:actual"
        "ly|wait|no(?=[ \\t]*[,:;!.\\u2014-])|sorry|oops|correction|i[ \\t]+mean|i[ \\t]+mean"
        "t|make[ \\t]+that|scratch[ \\t]+that|on[ \\t]+second[ \\t]+thought|(?:up)?on[ \\t]+("
        "?:further[ \\t]+|second[ \\t]+)?reflection|hmm+|hold[ \\t]+on|let[ \\t]+me[ \\t]+(?:"
        "re-?check|reconsider|correct[ \\t]+(?:that|myself))|never[ \\t]*mind|(?:edit|update|"
        "erratum|typo)(?=[ \\t]*[:,.)])|my[ \\t]+bad|whoops|err(?=[ \\t]*[,.])|(?:strike|disr"
        "egard|ignore)[ \\t]+(?:that|this|the[ \\t]+above)|i[ \\t]+was[ \\t]+wrong|(?:that|th"
        "is)[ \\t]+was[ \\t]+(?:a[ \\t]+)?(?:mistake|wrong|an[ \\t]+error)|re-?checking(?:[ "
        "\\t]+(?:gives|shows|yields))?|attendez|attends|en[ \\t]+fait|non(?=[ \\t]*[,:;!.])|o"
        "ups|espera|en[ \\t]+realidad|perd[oó]n|warte|eigentlich|nein(?=[ \\t]*[,:;!.])|korre"
        "ktur|na[ \\t]+verdade|aspetta|in[ \\t]+realt[àa]|подожди(?:те)?|на[ \\t]+самом[ \\t]"
        "+деле|нет(?=[ \\t]*[,:;!.])|исправление)|等等|等一下|其实是?|其實是?|不对|不對|更正|应该是|應該是|而是|待って|いい"
        "え|実は|訂正|잠깐|사실은?)|(?i:it(?:'s|[ \\t]+is|[ \\t]+should[ \\t]+be)|should[ \\t]+be|that["
        " \\t]+is|the[ \\t]+(?:final[ \\t]+|correct[ \\t]+|right[ \\t]+|real[ \\t]+|actual[ "
        "\\t]+)?answer[ \\t]+(?:is|should[ \\t]+be)|i[ \\t]+get|we[ \\t]+get|i[ \\t]+(?:think"
        "|believe|guess|suppose)|it[ \\t]+must[ \\t]+be|it[ \\t]+(?:'s|is)[ \\t]+(?:actually|"
        "really)|should[ \\t]+read|c'est|es[ \\t]+ist|es))){0,3})[ \\t,:]{1,3}(?P<value>\\$[^"
        "$\\n]{1,80}\\$|\\\\\\([^\\n]{1,80}?\\\\\\)|-?(?:\\d[\\d,]*(?:\\.\\d+)?|\\.\\d+)(?:/"
        "\\d+)?(?![\\d.]*\\d))(?![ \\t]{0,2}(?:[-+*/×÷=^]|\\\\(?:times|cdot|div)(?![A-Za-z]))"
        ")",
        0,
    ),
    "_answer._PREDICATED": (
        "(?<![\\w.=+*/^\\\\-])(?<![=+*/^-][ \\t])(?P<value>\\$[^$\\n]{1,80}\\$|\\\\\\([^\\n]{1,80}?\\\\\\)|"
        "-?(?:\\d[\\d,]*(?:\\.\\d+)?|\\.\\d+)(?:/\\d+)?(?![\\d.]*\\d))(?![ \\t]{0,2}(?:[-+*/×÷=^]|\\\\(?:"
        "times|cdot|div)(?![A-Za-z])))(?:[ \\t]+(?:(?i:is|are|seems|looks|would|could|might|ma"
        "y|can|be)[ \\t]+){0,2}(?:(?i:possible|plausible|likely)|(?i:also|too|equally)[ \\t]+(?"
        ":(?i:be|is)[ \\t]+)?(?:(?i:an?)[ \\t]+)?(?i:possible|plausible|likely|correct|right|va"
        "lid|acceptable|works?|answer|solution)|(?i:works?|correct|right|valid|acceptable)[ \\"
        "t]*,?[ \\t]+(?i:too|also|as[ \\t]+well)|(?:(?i:an?)[ \\t]+)?(?i:another|alternative|oth"
        "er|second|possible|plausible)[ \\t]+(?:(?i:valid|possible|plausible|correct)[ \\t]+)?("
        "?i:answer|solution|option|choice))\\b|[ \\t]+(?i:if|when|assuming)\\b[^()\\n]{0,40}\\))",
        0,
    ),
    "_answer._CORRECTED": (
        "\\b(?:(?i:actually|wait|no(?=[ \\t]*[,:;!.\\u2014-])|sorry|oops|correction|i[ \\t]+m"
        "ean|i[ \\t]+meant|make[ \\t]+that|scratch[ \\t]+that|on[ \\t]+second[ \\t]+thought|("
        "?:up)?on[ \\t]+(?:further[ \\t]+|second[ \\t]+)?reflection|hmm+|hold[ \\t]+on|let[ "
        "\\t]+me[ \\t]+(?:re-?check|reconsider|correct[ \\t]+(?:that|myself))|never[ \\t]*min"
        "d|(?:edit|update|erratum|typo)(?=[ \\t]*[:,.)])|my[ \\t]+bad|whoops|err(?=[ \\t]*[,."
        "])|(?:strike|disregard|ignore)[ \\t]+(?:that|this|the[ \\t]+above)|i[ \\t]+was[ \\t]"
        "+wrong|(?:that|this)[ \\t]+was[ \\t]+(?:a[ \\t]+)?(?:mistake|wrong|an[ \\t]+error)|r"
        "e-?checking(?:[ \\t]+(?:gives|shows|yields))?|attendez|attends|en[ \\t]+fait|non(?=["
        " \\t]*[,:;!.])|oups|espera|en[ \\t]+realidad|perd[oó]n|warte|eigentlich|nein(?=[ \\t"
        "]*[,:;!.])|korrektur|na[ \\t]+verdade|aspetta|in[ \\t]+realt[àa]|подожди(?:те)?|на[ "
        "\\t]+самом[ \\t]+деле|нет(?=[ \\t]*[,:;!.])|исправление)|等等|等一下|其实是?|其實是?|不对|不對|更正|应"
        "该是|應該是|而是|待って|いいえ|実は|訂正|잠깐|사실은?)(?:[ \\t]*[,:;!.\\u2014\\uff0c\\u3001-]?[ \\t]*\\b(?"
        ":(?:(?i:actually|wait|no(?=[ \\t]*[,:;!.\\u2014-])|sorry|oops|correction|i[ \\t]+mea"
        "n|i[ \\t]+meant|make[ \\t]+that|scratch[ \\t]+that|on[ \\t]+second[ \\t]+thought|(?:"
        "up)?on[ \\t]+(?:further[ \\t]+|second[ \\t]+)?reflection|hmm+|hold[ \\t]+on|let[ \\t"
        "]+me[ \\t]+(?:re-?check|reconsider|correct[ \\t]+(?:that|myself))|never[ \\t]*mind|("
        "?:edit|update|erratum|typo)(?=[ \\t]*[:,.)])|my[ \\t]+bad|whoops|err(?=[ \\t]*[,.])|"
        "(?:strike|disregard|ignore)[ \\t]+(?:that|this|the[ \\t]+above)|i[ \\t]+was[ \\t]+wr"
        "ong|(?:that|this)[ \\t]+was[ \\t]+(?:a[ \\t]+)?(?:mistake|wrong|an[ \\t]+error)|re-?"
        "checking(?:[ \\t]+(?:gives|shows|yields))?|attendez|attends|en[ \\t]+fait|non(?=[ \\"
        "t]*[,:;!.])|oups|espera|en[ \\t]+realidad|perd[oó]n|warte|eigentlich|nein(?=[ \\t]*["
        ",:;!.])|korrektur|na[ \\t]+verdade|aspetta|in[ \\t]+realt[àa]|подожди(?:те)?|на[ \\t"
        "]+самом[ \\t]+деле|нет(?=[ \\t]*[,:;!.])|исправление)|等等|等一下|其实是?|其實是?|不对|不對|更正|应该是|"
        "應該是|而是|待って|いいえ|実は|訂正|잠깐|사실은?)|(?i:it(?:'s|[ \\t]+is|[ \\t]+should[ \\t]+be)|should[ "
        "\\t]+be|that[ \\t]+is|the[ \\t]+(?:final[ \\t]+|correct[ \\t]+|right[ \\t]+|real[ \\"
        "t]+|actual[ \\t]+)?answer[ \\t]+(?:is|should[ \\t]+be)|i[ \\t]+get|we[ \\t]+get|i[ "
        "\\t]+(?:think|believe|guess|suppose)|it[ \\t]+must[ \\t]+be|it[ \\t]+(?:'s|is)[ \\t]"
        "+(?:actually|really)|should[ \\t]+read|c'est|es[ \\t]+ist|es))){0,3}(?:(?:[ \\t,:;\\"
        "u2013\\u2014\\uff0c\\uff1a\\uff1b\\u3001]|-(?![\\d.])){1,4}|(?<=[\\u3040-\\u30ff\\u3"
        "400-\\u9fff\\uac00-\\ud7af]))(?:\\*\\*)?(?P<value>\\$[^$\\n]{1,80}\\$|\\\\\\([^\\n]{"
        "1,80}?\\\\\\)|-?(?:\\d[\\d,]*(?:\\.\\d+)?|\\.\\d+)(?:/\\d+)?(?![\\d.]*\\d))(?![ \\t]"
        "{0,2}(?:[-+*/×÷=^]|\\\\(?:times|cdot|div)(?![A-Za-z])))",
        0,
    ),
    "_answer._TWO_VALUES": (
        "(?<![\\w.])(?P<a>-?(?:\\d+(?:\\.\\d+)?|\\.\\d+)(?:/\\d+)?)(?:\\s{1,3}[^\\W\\d_]{2,20})?\\$?\\s{0"
        ",3}[,.;]?\\s{0,3}\\(?\\s{0,3}(?P<join>(?:or\\s{1,3})?(?:maybe|perhaps|possibly|probably)"
        "\\b|\\\\(?:vee|lor)(?![A-Za-z])|\\||\\\\(?:mid|cup|sim)(?![A-Za-z])|或者?|\\|\\||[—–-]\\s{0,3}o"
        "r\\b|\\\\\\||\\\\?&|and/or\\b|\\\\text\\{\\s{0,3}(?:resp\\.?|and/or|/)\\s{0,3}\\})\\s{0,3}\\$?\\s{0,3"
        "}(?P<b>-?(?:\\d+(?:\\.\\d+)?|\\.\\d+)(?:/\\d+)?)(?![\\d.]*\\d)",
        re.IGNORECASE,
    ),
    "_answer._TWO_IN_ONE": (
        "(?<![\\w.])(?P<a>-?(?:\\d+(?:\\.\\d+)?|\\.\\d+)(?:/\\d+)?)(?:\\s{1,3}[^\\W\\d_]{2,20})?\\$?\\s{0"
        ",3}[,.;]?\\s{0,3}\\(?\\s{0,3}(?P<join>(?:or\\s{1,3})?(?:maybe|perhaps|possibly|probably)"
        "\\b|\\\\(?:vee|lor)(?![A-Za-z])|\\||\\\\(?:mid|cup|sim)(?![A-Za-z])|或者?|\\|\\||[—–-]\\s{0,3}o"
        "r\\b|\\\\\\||\\\\?&|and/or\\b|\\\\text\\{\\s{0,3}(?:resp\\.?|and/or|/)\\s{0,3}\\}|(?!(?i:or)\\b)(?:"
        "(?i:of)(?![^\\W\\d_])|(?:(?i:or|o|u|sau|tai|hay)(?![^\\W\\d_])|(?:(?i:vs\\.?|versus|oder|"
        "ou|eller|lub|albo|nebo|alebo|vagy|veya|atau|hoặc|или|або|ή|أو|או|या)(?![^\\W\\d_])|또는|"
        "혹은|または|もしくは|或者?|[还還]是)))|\\\\\\\\(?:\\[[^\\]]{0,8}\\])?|\\\\(?:vert|to|rightarrow|Rightarrow|"
        "implies|longrightarrow|approx)(?![A-Za-z])|\\\\text\\{\\s{0,3}[,;]?\\s{0,3}\\}|\\\\hspace\\*?"
        "\\{[^{}]{0,12}\\}|[→⇒⟶≈]|->|=>)\\s{0,3}\\$?\\s{0,3}(?P<b>-?(?:\\d+(?:\\.\\d+)?|\\.\\d+)(?:/\\d+"
        ")?)(?![\\d.]*\\d)",
        re.IGNORECASE,
    ),
    "_answer._TWO_PLAIN_VALUES": (
        "(?<![\\w.])(?P<a>-?(?:\\d+(?:\\.\\d+)?|\\.\\d+)(?:/\\d+)?)(?:\\s{1,3}[^\\W\\d_]{2,20})?(?P<spa"
        "n>\\$)?\\s{0,3}[,.;]?\\s{0,3}\\(?\\s{0,3}(?P<join>(?(span)(?!(?i:and/)?(?i:or)\\b))(?:and/"
        ")?(?:(?i:of)(?![^\\W\\d_])|(?:(?i:or|o|u|sau|tai|hay)(?![^\\W\\d_])|(?:(?i:vs\\.?|versus|"
        "oder|ou|eller|lub|albo|nebo|alebo|vagy|veya|atau|hoặc|или|або|ή|أو|או|या)(?![^\\W\\d_]"
        ")|또는|혹은|または|もしくは|或者?|[还還]是)))(?:\\s{1,3}else)?)\\s{0,3}(?(span)\\$)(?:[A-Za-z]\\s{0,2}=\\"
        "s{0,2})?(?P<b>-?(?:\\d+(?:\\.\\d+)?|\\.\\d+)(?:/\\d+)?)(?![\\d.]*\\d)",
        re.IGNORECASE,
    ),
    "gsm8k._AUTO": (
        "####[ \\t]{0,8}((?>-?[ \\t]{0,3}(?:\\\\\\$|\\$)?[ \\t]{0,3}-?(?:[0-9][0-9,]*(?:\\.[0-9]+)?|\\"
        ".[0-9]+)))(?![ \\t]{0,2}(?:[-+/×÷=^]|\\*(?!\\*(?![ \\t]{0,2}[0-9]))))(?![.:)]?[ \\t]{1,3}"
        "[A-Z][a-z])|(?i:\\banswer\\b(?:[ \\t]{1,3}is\\b)?)[ \\t]{0,3}(?:\\*\\*)?[ \\t]{0,3}[:：]?[ \\t"
        "]{0,3}(?:\\*\\*)?[ \\t]{0,3}(?:\\\\\\(|\\$)?[ \\t]{0,3}((?>-?[ \\t]{0,3}(?:\\\\\\$|\\$)?[ \\t]{0,3"
        "}-?(?:[0-9][0-9,]*(?:\\.[0-9]+)?|\\.[0-9]+)))(?![ \\t]{0,2}(?:[-+/×÷=^]|\\*(?!\\*(?![ \\t]"
        "{0,2}[0-9]))))|(?m:^[ \\t]{0,8}(?:\\*\\*)?A:)(?:\\*\\*)?[ \\t]{0,3}(?:\\*\\*)?[ \\t]{0,3}(?:\\"
        "\\\\(|\\$)?[ \\t]{0,3}((?>-?[ \\t]{0,3}(?:\\\\\\$|\\$)?[ \\t]{0,3}-?(?:[0-9][0-9,]*(?:\\.[0-9]+"
        ")?|\\.[0-9]+)))(?![ \\t]{0,2}(?:[-+/×÷=^]|\\*(?!\\*(?![ \\t]{0,2}[0-9]))))|<answer>\\s{0,8"
        "}[ \\t]{0,3}(?:\\*\\*)?[ \\t]{0,3}(?:\\\\\\(|\\$)?[ \\t]{0,3}((?>-?[ \\t]{0,3}(?:\\\\\\$|\\$)?[ \\t"
        "]{0,3}-?(?:[0-9][0-9,]*(?:\\.[0-9]+)?|\\.[0-9]+)))(?![ \\t]{0,2}(?:[-+/×÷=^]|\\*(?!\\*(?!"
        "[ \\t]{0,2}[0-9]))))\\$?(?:[ \\t.]{1,4}[A-Za-z]{1,20}){0,3}[ \\t.]{0,4}\\s{0,4}</answer>",
        0,
    ),
    "gsm8k._OFFERED_AFTER": (
        "(?:\\b(?i:could|might|may)(?:[ \\t]+(?i:also|even|well|actually|instead|equally|poss"
        "ibly))?[ \\t]+(?i:be)(?:[ \\t]+(?i:also|even))?|(?:^[ \\t$*)\\\\}]{0,4}[ \\t]*(?:(?i"
        ":or|o|u|sau|tai|hay)(?![^\\W\\d_])|(?:(?i:vs\\.?|versus|oder|ou|eller|lub|albo|nebo|"
        "alebo|vagy|veya|atau|hoặc|или|або|ή|أو|או|या)(?![^\\W\\d_])|또는|혹은|または|もしくは|或者?|[还還]是"
        "))|[.,;:!?\\n()\\[\\u2013\\u2014\\u2026-][ \\t]*(?:(?i:or)|(?:(?i:vs\\.?|versus|oder"
        "|ou|eller|lub|albo|nebo|alebo|vagy|veya|atau|hoặc|или|або|ή|أو|או|या)(?![^\\W\\d_])|"
        "또는|혹은|または|もしくは|或者?|[还還]是)))(?:[ \\t]+(?i:maybe|perhaps|possibly|else|even|rather|alt"
        "ernatively))?|\\b(?i:maybe|perhaps|possibly|alternatively|alternately|otherwise|conc"
        "eivably)|\\b(?i:another|other|alternative|second)(?:[ \\t]+(?i:possible|valid|plausi"
        "ble|potential|acceptable|correct))?[ \\t]+(?i:answer|value|solution|option|choice|po"
        "ssibility|candidate)s?(?:[ \\t]+(?i:is|would[ \\t]+be|could[ \\t]+be|might[ \\t]+be)"
        ")?|\\b(?i:unless)[ \\t]+(?i:it(?:'s|[ \\t]+is)|the[ \\t]+answer[ \\t]+is)|\\((?i:if|"
        "when|assuming|rounding|rounded)\\b[^()\\n]{0,40}?[,:]|(?:^|[.!?][ \\t]{1,3})(?i:if|w"
        "hen|assuming)\\b[^.,;()\\n]{1,40}[,:](?=[ \\t]{1,3}(?:\\\\?\\$)?(?:-?\\d[\\d,.]*|\\("
        "?[A-J]\\)?)\\$?[ \\t]*(?:[.!?)]|$))|(?:^|(?<=[\\n.!?;]))[ \\t*>]{0,3}(?=[aAoOrRsSvVc"
        "CjJоОвВαΑתاउ答解정đĐ])(?:\\b(?i:antwort|réponse|respuesta|risposta|resposta|antwoord|sv"
        "ar|vastaus|odpowiedź|odpověď|válasz|răspuns|cevap|jawaban|ответ|відповідь|απάντηση|ת"
        "שובה|الإجابة|الجواب|उत्तर)\\b|答案|答え|解答|정답|(?i:đáp án))[ \\t]{0,3}(?=:)|\\b(?:(?i:act"
        "ually|wait|no(?=[ \\t]*[,:;!.\\u2014-])|sorry|oops|correction|i[ \\t]+mean|i[ \\t]+m"
        "eant|make[ \\t]+that|scratch[ \\t]+that|on[ \\t]+second[ \\t]+thought|(?:up)?on[ \\t"
        "]+(?:further[ \\t]+|second[ \\t]+)?reflection|hmm+|hold[ \\t]+on|let[ \\t]+me[ \\t]+"
        "(?:re-?check|reconsider|correct[ \\t]+(?:that|myself))|never[ \\t]*mind|(?:edit|upda"
        "te|erratum|typo)(?=[ \\t]*[:,.)])|my[ \\t]+bad|whoops|err(?=[ \\t]*[,.])|(?:strike|d"
        "isregard|ignore)[ \\t]+(?:that|this|the[ \\t]+above)|i[ \\t]+was[ \\t]+wrong|(?:that"
        "|this)[ \\t]+was[ \\t]+(?:a[ \\t]+)?(?:mistake|wrong|an[ \\t]+error)|re-?checking(?:"
        "[ \\t]+(?:gives|shows|yields))?|attendez|attends|en[ \\t]+fait|non(?=[ \\t]*[,:;!.])"
        "|oups|espera|en[ \\t]+realidad|perd[oó]n|warte|eigentlich|nein(?=[ \\t]*[,:;!.])|kor"
        "rektur|na[ \\t]+verdade|aspetta|in[ \\t]+realt[àa]|подожди(?:те)?|на[ \\t]+самом[ \\"
        "t]+деле|нет(?=[ \\t]*[,:;!.])|исправление)|等等|等一下|其实是?|其實是?|不对|不對|更正|应该是|應該是|而是|待って|"
        "いいえ|実は|訂正|잠깐|사실은?)(?:[ \\t]*[,:;!.\\u2014\\uff0c\\u3001-]?[ \\t]*\\b(?:(?:(?i:actual"
        "ly|wait|no(?=[ \\t]*[,:;!.\\u2014-])|sorry|oops|correction|i[ \\t]+mean|i[ \\t]+mean"
        "t|make[ \\t]+that|scratch[ \\t]+that|on[ \\t]+second[ \\t]+thought|(?:up)?on[ \\t]+("
        "?:further[ \\t]+|second[ \\t]+)?reflection|hmm+|hold[ \\t]+on|let[ \\t]+me[ \\t]+(?:"
        "re-?check|reconsider|correct[ \\t]+(?:that|myself))|never[ \\t]*mind|(?:edit|update|"
        "erratum|typo)(?=[ \\t]*[:,.)])|my[ \\t]+bad|whoops|err(?=[ \\t]*[,.])|(?:strike|disr"
        "egard|ignore)[ \\t]+(?:that|this|the[ \\t]+above)|i[ \\t]+was[ \\t]+wrong|(?:that|th"
        "is)[ \\t]+was[ \\t]+(?:a[ \\t]+)?(?:mistake|wrong|an[ \\t]+error)|re-?checking(?:[ "
        "\\t]+(?:gives|shows|yields))?|attendez|attends|en[ \\t]+fait|non(?=[ \\t]*[,:;!.])|o"
        "ups|espera|en[ \\t]+realidad|perd[oó]n|warte|eigentlich|nein(?=[ \\t]*[,:;!.])|korre"
        "ktur|na[ \\t]+verdade|aspetta|in[ \\t]+realt[àa]|подожди(?:те)?|на[ \\t]+самом[ \\t]"
        "+деле|нет(?=[ \\t]*[,:;!.])|исправление)|等等|等一下|其实是?|其實是?|不对|不對|更正|应该是|應該是|而是|待って|いい"
        "え|実は|訂正|잠깐|사실은?)|(?i:it(?:'s|[ \\t]+is|[ \\t]+should[ \\t]+be)|should[ \\t]+be|that["
        " \\t]+is|the[ \\t]+(?:final[ \\t]+|correct[ \\t]+|right[ \\t]+|real[ \\t]+|actual[ "
        "\\t]+)?answer[ \\t]+(?:is|should[ \\t]+be)|i[ \\t]+get|we[ \\t]+get|i[ \\t]+(?:think"
        "|believe|guess|suppose)|it[ \\t]+must[ \\t]+be|it[ \\t]+(?:'s|is)[ \\t]+(?:actually|"
        "really)|should[ \\t]+read|c'est|es[ \\t]+ist|es))){0,3})[ \\t,:]{1,3}(?:\\\\?\\$)?[ "
        "\\t]{0,2}(-?\\d[\\d,]*(?:\\.\\d+)?)(?!\\d)(?![ \\t]{0,2}[-+*/×÷=^x])|(?<![\\w.=+*/×÷"
        "^-])(?<![=+*/×÷^-][ \\t])\\$?(-?\\d[\\d,]*(?:\\.\\d+)?)\\$?(?:[ \\t]+(?:(?i:is|are|s"
        "eems|looks|would|could|might|may|can|be)[ \\t]+){0,2}(?:(?i:possible|plausible|likel"
        "y)|(?i:also|too|equally)[ \\t]+(?:(?i:be|is)[ \\t]+)?(?:(?i:an?)[ \\t]+)?(?i:possibl"
        "e|plausible|likely|correct|right|valid|acceptable|works?|answer|solution)|(?i:works?"
        "|correct|right|valid|acceptable)[ \\t]*,?[ \\t]+(?i:too|also|as[ \\t]+well)|(?:(?i:a"
        "n?)[ \\t]+)?(?i:another|alternative|other|second|possible|plausible)[ \\t]+(?:(?i:va"
        "lid|possible|plausible|correct)[ \\t]+)?(?i:answer|solution|option|choice))\\b|[ \\t"
        "]+(?i:if|when|assuming)\\b[^()\\n]{0,40}\\))",
        0,
    ),
    "gsm8k._CORRECTED": (
        "\\b(?:(?i:actually|wait|no(?=[ \\t]*[,:;!.\\u2014-])|sorry|oops|correction|i[ \\t]+m"
        "ean|i[ \\t]+meant|make[ \\t]+that|scratch[ \\t]+that|on[ \\t]+second[ \\t]+thought|("
        "?:up)?on[ \\t]+(?:further[ \\t]+|second[ \\t]+)?reflection|hmm+|hold[ \\t]+on|let[ "
        "\\t]+me[ \\t]+(?:re-?check|reconsider|correct[ \\t]+(?:that|myself))|never[ \\t]*min"
        "d|(?:edit|update|erratum|typo)(?=[ \\t]*[:,.)])|my[ \\t]+bad|whoops|err(?=[ \\t]*[,."
        "])|(?:strike|disregard|ignore)[ \\t]+(?:that|this|the[ \\t]+above)|i[ \\t]+was[ \\t]"
        "+wrong|(?:that|this)[ \\t]+was[ \\t]+(?:a[ \\t]+)?(?:mistake|wrong|an[ \\t]+error)|r"
        "e-?checking(?:[ \\t]+(?:gives|shows|yields))?|attendez|attends|en[ \\t]+fait|non(?=["
        " \\t]*[,:;!.])|oups|espera|en[ \\t]+realidad|perd[oó]n|warte|eigentlich|nein(?=[ \\t"
        "]*[,:;!.])|korrektur|na[ \\t]+verdade|aspetta|in[ \\t]+realt[àa]|подожди(?:те)?|на[ "
        "\\t]+самом[ \\t]+деле|нет(?=[ \\t]*[,:;!.])|исправление)|等等|等一下|其实是?|其實是?|不对|不對|更正|应"
        "该是|應該是|而是|待って|いいえ|実は|訂正|잠깐|사실은?)(?:[ \\t]*[,:;!.\\u2014\\uff0c\\u3001-]?[ \\t]*\\b(?"
        ":(?:(?i:actually|wait|no(?=[ \\t]*[,:;!.\\u2014-])|sorry|oops|correction|i[ \\t]+mea"
        "n|i[ \\t]+meant|make[ \\t]+that|scratch[ \\t]+that|on[ \\t]+second[ \\t]+thought|(?:"
        "up)?on[ \\t]+(?:further[ \\t]+|second[ \\t]+)?reflection|hmm+|hold[ \\t]+on|let[ \\t"
        "]+me[ \\t]+(?:re-?check|reconsider|correct[ \\t]+(?:that|myself))|never[ \\t]*mind|("
        "?:edit|update|erratum|typo)(?=[ \\t]*[:,.)])|my[ \\t]+bad|whoops|err(?=[ \\t]*[,.])|"
        "(?:strike|disregard|ignore)[ \\t]+(?:that|this|the[ \\t]+above)|i[ \\t]+was[ \\t]+wr"
        "ong|(?:that|this)[ \\t]+was[ \\t]+(?:a[ \\t]+)?(?:mistake|wrong|an[ \\t]+error)|re-?"
        "checking(?:[ \\t]+(?:gives|shows|yields))?|attendez|attends|en[ \\t]+fait|non(?=[ \\"
        "t]*[,:;!.])|oups|espera|en[ \\t]+realidad|perd[oó]n|warte|eigentlich|nein(?=[ \\t]*["
        ",:;!.])|korrektur|na[ \\t]+verdade|aspetta|in[ \\t]+realt[àa]|подожди(?:те)?|на[ \\t"
        "]+самом[ \\t]+деле|нет(?=[ \\t]*[,:;!.])|исправление)|等等|等一下|其实是?|其實是?|不对|不對|更正|应该是|"
        "應該是|而是|待って|いいえ|実は|訂正|잠깐|사실은?)|(?i:it(?:'s|[ \\t]+is|[ \\t]+should[ \\t]+be)|should[ "
        "\\t]+be|that[ \\t]+is|the[ \\t]+(?:final[ \\t]+|correct[ \\t]+|right[ \\t]+|real[ \\"
        "t]+|actual[ \\t]+)?answer[ \\t]+(?:is|should[ \\t]+be)|i[ \\t]+get|we[ \\t]+get|i[ "
        "\\t]+(?:think|believe|guess|suppose)|it[ \\t]+must[ \\t]+be|it[ \\t]+(?:'s|is)[ \\t]"
        "+(?:actually|really)|should[ \\t]+read|c'est|es[ \\t]+ist|es))){0,3}(?:(?:[ \\t,:;\\"
        "u2013\\u2014\\uff0c\\uff1a\\uff1b\\u3001]|-(?![\\d.])){1,4}|(?<=[\\u3040-\\u30ff\\u3"
        "400-\\u9fff\\uac00-\\ud7af]))(?:\\*\\*)?(?:\\\\?\\$)?[ \\t]{0,2}(-?\\d[\\d,]*(?:\\."
        "\\d+)?)(?!\\d)(?![ \\t]{0,2}[-+*/×÷=^x])",
        0,
    ),
    # the answer forms and the refusals, before their one-character lookaheads
    "_final._FORM": (
        "(?=[\\\\<#]|[aA][nN])(?:\\\\(?:boxed|fbox)(?![A-Za-z])|<answer>|####|(?i:\\banswer[ \\"
        "t]*(?:is\\b|:)))",
        0,
    ),
    "_final._REFUSAL": (
        "(?i:\\b(?:I|we)[ \\t]+(?:do[ \\t]*n[o']t|don't|cannot|can't|can[ \\t]+not|could[ \\t"
        "]*n[o']t|couldn't|(?:am|was|were|are)[ \\t]+unable[ \\t]+to|(?:'m|am|was|were|are)[ "
        "\\t]+not[ \\t]+(?:sure|able[ \\t]+to))[ \\t]+(?:know|solve|answer|determine|find|fig"
        "ure|compute|tell|say|be[ \\t]+sure|finish|complete|work[ \\t]+out|calculate)\\b|\\bI"
        "[ \\t]+give[ \\t]+up\\b|\\b(?:unable|impossible)[ \\t]+to[ \\t]+(?:solve|answer|dete"
        "rmine|tell|find|compute|finish|complete)\\b|\\b(?:needs?|needed|requires?)[ \\t]+mor"
        "e[ \\t]+(?:information|data)\\b|\\b(?:not[ \\t]+enough|insufficient)[ \\t]+(?:inf"
        "ormation|data)\\b)",
        0,
    ),
}
OLD_AUTO = OLD.pop("gsm8k._AUTO")  # unchanged: gated (gsm8k._may_mark), not rewritten

MODULES = {"_answer": _answer, "_final": _final, "gsm8k": gsm8k}


def _new(name: str) -> re.Pattern[str]:
    module, attr = name.split(".")
    pattern: re.Pattern[str] = getattr(MODULES[module], attr)
    return pattern


def _found(pattern: re.Pattern[str], text: str, *bounds: int) -> list[tuple[Any, ...]]:
    return [(m.span(), m.groups(), m.groupdict()) for m in pattern.finditer(text, *bounds)]


# --- the fuzz ---------------------------------------------------------------------------

_WORDS = (
    "could", "might", "may", "be", "also", "even", "well", "or", "o", "u", "sau", "hay",
    "vs", "vs.", "versus", "oder", "ou", "eller", "lub", "albo", "vagy", "atau", "hoặc",
    "или", "або", "ή", "أو", "או", "या", "또는", "혹은", "または", "もしくは", "或", "或者",
    "还是", "還是", "maybe", "perhaps", "possibly", "alternatively", "otherwise",
    "conceivably", "another", "other", "alternative", "second", "possible", "valid",
    "answer", "answers", "value", "solution", "option", "is", "would be", "unless",
    "it's", "it is", "the answer is", "if", "when", "assuming", "rounding", "rounded",
    "antwort", "réponse", "respuesta", "svar", "ответ", "відповідь", "απάντηση", "答案",
    "答え", "정답", "đáp án", "actually", "wait", "no", "sorry", "oops", "correction",
    "i mean", "i meant", "make that", "scratch that", "on second thought", "should be",
    "never mind", "edit", "typo", "my bad", "err", "ignore that", "rechecking gives",
    "en fait", "c'est", "nein", "es ist", "eigentlich", "нет", "на самом деле", "等等",
    "其实是", "不对", "而是", "いいえ", "잠깐", "사실", "，", "、", "。",
    "that is", "i get", "we get", "plausible", "likely", "too", "equally", "correct",
    "right", "works", "work", "acceptable", "as well", "an", "a", "choice", "A:",
    "####", "<answer>", "</answer>", "**", "\\(", "\\)", "\\times", "\\cdot", "$",
    "works as well", "is also correct", "would also work", "another choice", "equally valid",
    "an alternative option", "assuming rounding)", "if rounded)", "when x > 0)", "A: 18", "\nA: 18", "\n**A:** 18",
    "anſwer", "poſſible", "ſecond", "mıght", "MİGHT", "unleſs", "İf", "ıf", "Kould",
    "I don't know", "we cannot determine", "I'm not able to", "unable to solve", "I give up",
    "needs more information", "not enough data", "ınsufficient data", "İ can't tell",
    "\\boxed{", "\\fbox", "answer:", "Answer is", "and then the", "for", "\\frac{1}{",
)  # fmt: skip
_CHARS = list("0123456789٣-.,:;!?()[]—–…\n \t*>=+/^x×#$\\{}aeiosnKİıſßAZ'\"")
_NUMBERS = ["20", "-3", "3.5", ".5", "1,000", "18", "$20$", "$x = 4$", "\\(20\\)", "٣"]
_TOKENS = [*_WORDS, *(w.upper() for w in _WORDS), *(w.title() for w in _WORDS)]
_TOKENS += [*_CHARS, *_NUMBERS * 6]  # values are what every pattern needs: often
_SEPARATORS = ["", " ", " ", " ", "  ", "\t", ", ", ". ", ": ", "\n", "\n\n", " (", ") ", "; "]
_SEPARATOR = st.sampled_from(_SEPARATORS)
_VALUE_OR_NOT = st.sampled_from(["", "", *_NUMBERS])  # a value right after a word, often
TEXTS = st.lists(
    st.tuples(*(st.sampled_from(_TOKENS), _SEPARATOR, _VALUE_OR_NOT, _SEPARATOR) * 2),
    max_size=15,
).map(lambda parts: "".join("".join(part) for part in parts))
# ASCII only: the gates read ASCII text themselves (beyond it, re decides)
_ASCII = [token for token in _TOKENS if token.isascii()]
ASCII_TEXTS = st.lists(
    st.tuples(*(st.sampled_from(_ASCII), _SEPARATOR, _VALUE_OR_NOT, _SEPARATOR) * 2),
    max_size=15,
).map(lambda parts: "".join("".join(part) for part in parts).encode("ascii", "ignore").decode())
# The default run fuzzes 300 texts a property (the same 300 each run: derandomized); each
# property is fuzzed again over 2,000 texts by its twin marked slow (`pytest -m slow`).
FUZZ = settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)
SOAK = settings(FUZZ, max_examples=2000)


def _same_matches(text: str, pos: int, end: int) -> None:
    for name, (pattern, flags) in OLD.items():
        old, new = re.compile(pattern, flags), _new(name)
        assert _found(new, text) == _found(old, text), name
        assert _found(new, text, pos, end) == _found(old, text, pos, end), name


@FUZZ
@given(TEXTS, st.integers(0, 60), st.integers(0, 200))
def test_rewritten_patterns_find_the_same_matches_on_the_fuzz(
    text: str, pos: int, end: int
) -> None:
    _same_matches(text, pos, end)


@pytest.mark.slow
@SOAK
@given(TEXTS, st.integers(0, 60), st.integers(0, 200))
def test_rewritten_patterns_find_the_same_matches_on_a_long_fuzz(
    text: str, pos: int, end: int
) -> None:
    _same_matches(text, pos, end)


_GATE_TEXTS = (st.one_of(TEXTS, ASCII_TEXTS), st.integers(0, 60), st.integers(0, 200))


@FUZZ
@given(*_GATE_TEXTS)
# one gate word each, alone: a gate that forgot it would say no where the regex matches
@example("So 20 is another choice.", 0, 200)
@example("So 20 is equally valid.", 0, 200)
@example("18 (20 assuming rounding)", 0, 200)
@example("Q: how many?\nA: 18", 0, 200)
# re folds "ſ" as "s": beyond ASCII the gates leave it to re
@example("The anſwer is 18", 0, 200)
@example("So 20 is another ſolution.", 0, 200)
@example("18 is not  the answer.", 0, 200)
@example("18 isn't the final answer.", 0, 200)
@example("Hmm, 18 is not the anſwer.", 0, 200)
@example("That is not the corre\u212at answer.", 0, 200)
@example("So 18, no\nfine", 0, 200)  # DISAVOWAL's "no" before a line's end
@example("could NO .5", 0, 200)  # ... or a stop after blanks
def test_gates_say_no_only_where_the_old_pattern_finds_nothing(
    text: str, pos: int, end: int
) -> None:
    _gates_say_no_only_where_nothing_is_found(text, pos, end)


@pytest.mark.slow
@SOAK
@given(*_GATE_TEXTS)
def test_gates_say_no_only_where_the_old_pattern_finds_nothing_on_a_long_fuzz(
    text: str, pos: int, end: int
) -> None:
    _gates_say_no_only_where_nothing_is_found(text, pos, end)


def _gates_say_no_only_where_nothing_is_found(text: str, pos: int, end: int) -> None:
    auto = re.compile(*OLD_AUTO)
    if not gsm8k._may_mark(text):
        assert _found(auto, text) == []
    if not gsm8k._may_mark(text[pos:end]):  # _offered_other gates a slice, reads in bounds
        assert _found(auto, text, pos, end) == []
    if not _common.may_offer_predicate(text):
        assert _found(re.compile(*OLD["_answer._PREDICATED"]), text) == []
    if not _common.may_correct(text):
        assert _found(_answer._CORRECTED, text) == []
    if not _common.may_disavow(text):
        for pattern in (_common.DISAVOWAL, _common._NAMED_WRONG, _common._WORDS_WRONG):
            assert _found(pattern, text) == []
    tail = text[-200:].rstrip()  # as _final.cut_off reads a conclusion
    if tail and not _final._may_dangle(tail[-1]):
        assert _final._DANGLING.search(tail) is None
        assert _final._DANGLING_WORD.search(tail) is None


def test_the_lookahead_letters_fold_as_the_cue_words_do() -> None:
    """A cue word's first letter matches, case-folded by re (``ſ`` for s, ``İ`` and ``ı``
    for i, ``K`` for k), only characters the lookahead's letters match too."""
    every = "".join(map(chr, range(0x110000)))
    for word_letters, ahead in (
        ("acdeikmnoprstuwпнио", _common.OFFER_CUE_AHEAD),
        ("acdehiklmnoprstuwпнио", _common.CORRECTION_CUE_AHEAD),
    ):
        ahead_re = re.compile(ahead.replace(r"\b", ""))
        for letter in word_letters:
            folded = re.findall(f"(?i:{letter})", every)
            assert {"İ", "ı"} <= set(folded) if letter == "i" else True
            assert "ſ" in folded if letter == "s" else True
            assert all(ahead_re.match(ch) for ch in folded), letter


def test_the_dangling_gate_lets_through_every_character_a_cut_sentence_ends_on() -> None:
    """A cut sentence (``_final._DANGLING``, ``_DANGLING_WORD``) ends on a mark of
    ``_final._DANGLING_LAST`` or on a letter: an ASCII one, or one that re folds as one
    (``ſ`` for s: "thuſ" ends a sentence on "thus"). The gate lets each through."""
    every = "".join(map(chr, range(0x110000)))
    for letter in "abcdefghijklmnopqrstuvwxyz":
        assert all(_final._may_dangle(ch) for ch in re.findall(f"(?i:{letter})", every)), letter
    assert _final._DANGLING_WORD.search("So it is thuſ") is not None  # folded, and let through
    for text in ("x = ", "3 +", "\\frac{1}{", "(", "\\times", "z = $", "y = \\(", "[", ","):
        tail = text.rstrip()
        assert _final._may_dangle(tail[-1]) and _final._DANGLING.search(tail), text


# --- the corpus -------------------------------------------------------------------------


def _corpus() -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import real_outputs
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    rows: list[dict[str, Any]] = real_outputs.load_corpus()
    return rows


class _Recorder:
    """A compiled pattern that records the arguments of every finditer/search made on it."""

    def __init__(self, pattern: re.Pattern[str], calls: list[tuple[Any, ...]]) -> None:
        self.pattern, self.flags, self._calls = pattern.pattern, pattern.flags, calls
        self._compiled = pattern

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(args)
            return getattr(self._compiled, method)(*args, **kwargs)

        return call


def _run_corpus(rows: list[dict[str, Any]]) -> None:
    from rewardkit.verifiers.gsm8k import GSM8KVerifier
    from rewardkit.verifiers.math import MathVerifier

    for verifier in _verifiers(MathVerifier, GSM8KVerifier):
        for row in rows:
            try:
                verifier.quick_check(verifier.extract(row["response"]), row["ground_truth"])
            except Exception:  # a ground truth one family cannot read: not this test's
                pass


def _verifiers(math_cls: Any, gsm8k_cls: Any) -> Iterator[Any]:
    yield from (math_cls(extraction="default"), math_cls(extraction="strict"))
    yield from (gsm8k_cls(method=method) for method in ("auto", "strict", "flexible"))


def test_rewritten_patterns_and_gates_on_every_text_the_corpus_hands_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: dict[str, list[tuple[Any, ...]]] = {name: [] for name in OLD}
    new = {name: _new(name) for name in OLD}  # the compiled patterns, not the recorders
    for name in OLD:
        module, attr = name.split(".")
        monkeypatch.setattr(MODULES[module], attr, _Recorder(new[name], calls[name]))
    gated: dict[str, list[str]] = {"mark": [], "predicate": []}
    gates = {"mark": gsm8k._may_mark, "predicate": _common.may_offer_predicate}
    for key, module, attr in (
        ("mark", gsm8k, "_may_mark"),
        ("predicate", _answer, "may_offer_predicate"),
    ):
        monkeypatch.setattr(module, attr, lambda text, key=key: _note(gated[key], gates[key], text))
    _run_corpus(_corpus())
    assert all(len(calls[name]) > 100 for name in OLD), {k: len(v) for k, v in calls.items()}
    for name, (pattern, flags) in OLD.items():
        old = re.compile(pattern, flags)
        for args in calls[name]:
            assert _found(new[name], *args) == _found(old, *args), (name, args)
    auto, predicated = re.compile(*OLD_AUTO), re.compile(*OLD["_answer._PREDICATED"])
    skipped = [text for text in gated["mark"] if not gates["mark"](text)]
    assert len(skipped) > 500 and all(_found(auto, text) == [] for text in skipped)
    skipped = [text for text in gated["predicate"] if not gates["predicate"](text)]
    assert len(skipped) > 1000 and all(_found(predicated, text) == [] for text in skipped)


def _note(seen: list[str], gate: Any, text: str) -> bool:
    seen.append(text)
    return bool(gate(text))


# --- end to end: the tree before against this one, in two processes ----------------------

_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
import real_outputs
import rewardkit
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier
rows = real_outputs.load_corpus()[:: int(sys.argv[1])]
verifiers = [MathVerifier(extraction="default"), MathVerifier(extraction="strict")]
verifiers += [GSM8KVerifier(method=m) for m in ("auto", "strict", "flexible")]
out = []
for verifier in verifiers:
    for row in rows:
        try:
            extracted = verifier.extract(row["response"])
            out.append(repr((extracted, verifier.quick_check(extracted, row["ground_truth"]))))
        except Exception as error:
            out.append("raised " + repr(error))
print(json.dumps({"file": rewardkit.__file__, "out": out}))
"""


def _old_src(tmp_path: Path) -> Path:
    """The verifiers of BASE_COMMIT: a checkout of that commit, else git's copy of it."""
    if (BASE_SRC / "rewardkit" / "verifiers" / "_answer.py").exists() and _at_base(BASE_SRC):
        return BASE_SRC
    try:
        blob = subprocess.run(
            ["git", "-C", str(ROOT), "archive", BASE_COMMIT, "src"],
            capture_output=True, check=True, timeout=60,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        pytest.skip(f"the tree before the change (commit {BASE_COMMIT[:10]}) is not at hand")
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "src"


def _at_base(src: Path) -> bool:
    """Whether the checkout holding ``src`` is at BASE_COMMIT (an older one is not the base)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(src), "rev-parse", "HEAD"],
            capture_output=True, check=True, timeout=60, text=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    return head == BASE_COMMIT


def _outputs(src: Path, every: int) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(every), str(ROOT / "benchmarks")],
        capture_output=True, text=True, env=env, timeout=600, check=True,
    )  # fmt: skip
    child = json.loads(done.stdout)
    assert Path(child["file"]).is_relative_to(src)  # the tree asked for, not the installed one
    outputs: list[str] = child["out"]
    return outputs


def _same_outputs(tmp_path: Path, every: int) -> None:
    """Every ``every``-th corpus row gives the same outputs on both trees."""
    old, new = _outputs(_old_src(tmp_path), every), _outputs(ROOT / "src", every)
    assert len(old) == len(new) == 5 * len(_corpus()[::every])
    differ = [(i, a, b) for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert differ == [], differ[:3]


def test_a_fifth_of_the_corpus_gives_the_same_outputs_as_before(tmp_path: Path) -> None:
    """Each child scores every fifth corpus row 5 times; the patterns and gates above see
    every text of the whole corpus, and the slow twin below runs all of it end to end."""
    _same_outputs(tmp_path, 5)


@pytest.mark.slow
def test_every_corpus_row_gives_the_same_outputs_as_before(tmp_path: Path) -> None:
    """About 5 s: each child scores the whole corpus 5 times (1.5 s)."""
    _same_outputs(tmp_path, 1)


# --- plain_number: Fraction built from the parts, not parsed from the string -------------


def _plain_number_before(text: str) -> Fraction | None:
    """``_common.plain_number`` as it was: Fraction's own string parser."""
    cleaned = text.replace(",", "").replace("$", "").strip()
    if len(cleaned) > _common.MAX_ANSWER_CHARS or not re.fullmatch(
        r"-?(?:\d+(?:\.\d*)?|\.\d+)", cleaned
    ):
        return None
    return Fraction(cleaned)


_NUMBER_CHARS = st.sampled_from([*"0123456789-.,$ ", "٣", "𝟘", "०", "\t", "e", "/", "_", "+"])


_NUMBER_TEXTS = st.one_of(st.lists(_NUMBER_CHARS, max_size=30).map("".join), st.text(max_size=20))


@FUZZ
@given(_NUMBER_TEXTS)
@example("0" * 999 + ".5")
@example("-" + "9" * 1000)
@example("1" * 1001)
def test_plain_number_gives_the_same_fraction_as_before(text: str) -> None:
    _same_fraction(text)


@pytest.mark.slow
@SOAK
@given(_NUMBER_TEXTS)
def test_plain_number_gives_the_same_fraction_as_before_on_a_long_fuzz(text: str) -> None:
    _same_fraction(text)


def _same_fraction(text: str) -> None:
    new, old = _common.plain_number(text), _plain_number_before(text)
    assert new == old
    if old is not None:
        assert new is not None
        assert (type(new), new.numerator, new.denominator) == (
            Fraction,
            old.numerator,
            old.denominator,
        )


_STRUCK_START_BEFORE = re.compile(r"~~|<(?i:del|strike)>")  # what visible() searched for
_STRUCK_CHARS = st.sampled_from(
    ["~", "~~", "<", ">", "del", "DEL", "Strike", "ſtrike", "x", " ", "/"]
)


_STRUCK_TEXTS = st.lists(_STRUCK_CHARS, max_size=12).map("".join)


@FUZZ
@given(_STRUCK_TEXTS)
def test_struck_text_is_looked_for_where_it_was(text: str) -> None:
    _struck_where_it_was(text)


@pytest.mark.slow
@SOAK
@given(_STRUCK_TEXTS)
def test_struck_text_is_looked_for_where_it_was_on_a_long_fuzz(text: str) -> None:
    _struck_where_it_was(text)


def _struck_where_it_was(text: str) -> None:
    found = "~~" in text or _common._STRUCK_TAG.search(text) is not None
    assert found == (_STRUCK_START_BEFORE.search(text) is not None)


_MATHY_TEXT = st.lists(st.sampled_from([*"09$\\[]x ", "\n", "٣", "abc"]), max_size=30).map("".join)
_TAIL = _common.SEARCH_TAIL_CHARS


_PADS = st.sampled_from([0, 1, _TAIL - 1, _TAIL, _TAIL + 1])


@FUZZ
@given(_MATHY_TEXT, _PADS)
def test_the_last_mathy_character_is_where_last_match_found_it(text: str, pad: int) -> None:
    _last_mathy_where_last_match_found_it(text, pad)


@pytest.mark.slow
@SOAK
@given(_MATHY_TEXT, _PADS)
def test_the_last_mathy_character_is_where_last_match_found_it_on_a_long_fuzz(
    text: str, pad: int
) -> None:
    _last_mathy_where_last_match_found_it(text, pad)


def _last_mathy_where_last_match_found_it(text: str, pad: int) -> None:
    for padded in (text, text + "x" * pad, "5" + "x" * pad + text):
        found = _common.last_match(_answer._MATHY, padded)
        assert _answer._last_mathy_end(padded) == (None if found is None else found.end())


# Each word a correction opens with, in the case it is written: the gate lets it through
_CORRECTION_OPENINGS = [
    "Actually, 20", "WAIT, 20", "No, 20", "Non, 20", "Nein, 20", "Sorry, 20", "Oops, 20",
    "Whoops, 20", "Oups, 20", "Correction: 20", "I mean 20", "I meant 20", "Make that 20",
    "Scratch that, 20", "On second thought, 20", "Upon further reflection, 20", "Hmmm, 20",
    "Hold on, 20", "Let me recheck: 20", "Let me reconsider: 20", "Let me correct myself: 20",
    "Never mind, 20", "Edit: 20", "Update: 20", "Erratum: 20", "Typo: 20", "My bad, 20",
    "Err, 20", "Strike that, 20", "Disregard the above: 20", "Ignore this: 20",
    "I was wrong: 20", "That was a mistake, 20", "This was an error: 20", "Re-checking gives 20",
    "Attendez, 20", "Attends, 20", "En fait, 20", "Espera, 20", "En realidad, 20",
    "Warte, 20", "Eigentlich 20", "Korrektur: 20", "Na verdade, 20", "Aspetta, 20",
    "In realta, 20", "Perdon, 20", "I  mean 20", "Hold\ton, 20", "Err , 20",
    "Let  me  re-check: 20", "That was an error: 20", "My\t bad, 20",
]  # fmt: skip


@pytest.mark.parametrize("text", _CORRECTION_OPENINGS)
def test_the_correction_gate_lets_every_opening_word_through(text: str) -> None:
    for written in (text, text.upper(), text.lower()):
        passage = f"So $18$. {written}"
        assert _answer._CORRECTED.search(passage) is not None, passage
        assert _common.may_correct(passage)
