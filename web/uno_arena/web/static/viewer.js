/* The match viewer: the table drawn at any step of a match, from its events.
 *
 * A replay loads the match's JSON (/match/ID.json: summary, finished, events, automatic_events) once; a
 * live match follows /match/ID/events (server-sent events, public events only, and its faults) and
 * reloads as its replay when it ends. Step N shows the table after the first N events, so `#step=N`
 * always means the same moment. A log the server ended inside a hand (a forfeit, an abort) has no
 * match_ended event: the replay adds one from the result as its last step.
 * The table's state is computed from the events alone (a reducer), kept as a snapshot every SNAPSHOT
 * steps, so any step is at most SNAPSHOT events away. Plain JavaScript, no build step, no libraries.
 * The seat to move (▶, "to move": whose decision comes next) is the replay JSON's `to_move[step - 1]`,
 * from the rules core on the server; the seat the step's event is about is outlined "just played".
 * Live, nothing says whose decision comes next (the public events do not), so only the latter shows.
 */
"use strict";
(function () {
  const SNAPSHOT = 64;
  const BASE_DELAY_MS = 700; // between steps when playing at 1×
  const LIVE_RELOAD_TRIES = 60; // once a live match ends, how many times (1 s apart) to look for its replay

  // The protocol's words, from the server (the page's settings, `names`: uno_arena.web.names, made from the
  // bindings): for each enum the viewer reads (colour, rank, shuffle_reason, hand_end, match_end,
  // fault_kind), each value's full name, as the match's JSON spells it -> its label; `symbol`: a rank's
  // card face. The script holds no copy of them.
  const LABELS = pageSettings().names || {};
  // how many seats sit on each side of the table (bottom, left, top, right), clockwise from the bottom
  const SIDES = {
    1: [1, 0, 0, 0], 2: [1, 0, 1, 0], 3: [1, 0, 2, 0], 4: [1, 1, 1, 1], 5: [1, 1, 2, 1], 6: [2, 1, 2, 1],
    7: [2, 1, 3, 1], 8: [2, 2, 2, 2], 9: [2, 2, 3, 2], 10: [3, 2, 3, 2],
  };
  // each seat's line in the score chart: a dash pattern and a marker shape, so no seat is told by colour alone
  const SERIES = [
    ["", "circle"], ["6 3", "square"], ["2 2", "triangle"], ["8 3 2 3", "diamond"], ["", "cross"],
    ["6 3", "circle"], ["2 2", "square"], ["8 3 2 3", "triangle"], ["4 4", "diamond"], ["1 3", "cross"],
  ];
  const SVG = "http://www.w3.org/2000/svg";

  function pageSettings() {
    const element = document.getElementById("viewer-settings");
    return element ? JSON.parse(element.textContent) : {};
  }

  /** The label of a protocol value (`enumName`: a key of LABELS): "" when the JSON left it out (the zero
   * value), the value itself when the server's names do not know it. */
  function labelOf(enumName, value) {
    if (value === undefined || value === null) return "";
    return (LABELS[enumName] || {})[value] || String(value);
  }

  // ---- cards ---------------------------------------------------------------------------------------

  function colourName(colour) {
    return colour === undefined ? "" : labelOf("colour", colour);
  }

  function cardName(card) {
    if (!card) return "";
    const rank = labelOf("rank", card.rank) || "?";
    const colour = colourName(card.colour);
    return colour ? `${colour} ${rank}` : rank;
  }

  function cardElement(card, small) {
    const element = document.createElement("span");
    const colour = colourName(card.colour) || "wild";
    element.className = `card c-${colour}${small ? " small" : ""}`;
    element.dataset.card = cardName(card);
    element.dataset.index = String(card.index || 0);
    element.title = cardName(card);
    const symbol = document.createElement("span");
    symbol.className = "sym";
    symbol.textContent = labelOf("symbol", card.rank) || "?";
    const name = document.createElement("span");
    name.className = "cname";
    name.textContent = colour;
    element.append(symbol, name);
    return element;
  }

  function backElement() {
    const element = document.createElement("span");
    element.className = "card back small";
    element.setAttribute("aria-hidden", "true");
    return element;
  }

  // ---- the reducer: the table after each event -------------------------------------------------------

  function kindOf(event) {
    const kind = Object.keys(event)[0];
    return [kind, event[kind] || {}];
  }

  function newState(players) {
    return {
      players, hand: 0, dealer: null, hands: Array.from({ length: players }, () => []),
      sizes: Array(players).fill(0), scores: Array(players).fill(0), uno: Array(players).fill(false),
      top: null, colour: null, direction: 1, pile: 0, discards: 0, over: false, handWinner: null, step: 0,
      calling: null, called: false, // the seat whose play is not whole yet, and whether it called UNO
    };
  }

  function copyState(state) {
    return {
      ...state, hands: state.hands.map((h) => (h === null ? null : h.slice())), sizes: state.sizes.slice(),
      scores: state.scores.slice(), uno: state.uno.slice(),
    };
  }

  /** The seat `seat`'s hand comes from: a 0 passes every hand one seat in the direction of play. */
  function giverOf(seat, direction, players) {
    return (((seat - direction) % players) + players) % players;
  }

  // the events that belong to a play until it is whole: more cards laid (multi_play), a 7's swaps and a
  // 0's passes (seven_zero); UNO is judged after them, on the hand the whole play left (RULINGS 19, 27)
  const PLAY_GOES_ON = ["swapped", "hands_passed", "received"];

  function removeCard(hand, card) {
    if (hand === null) return;
    const at = hand.findIndex((c) => (c.index || 0) === (card.index || 0));
    if (at >= 0) hand.splice(at, 1);
  }

  /** Apply one event to `state` (changed in place). Absent fields are their defaults (seat 0, ...). */
  function applyEvent(state, event) {
    const [kind, e] = kindOf(event);
    const seat = e.seat || 0;
    state.step += 1;
    if (kind !== "played" && !PLAY_GOES_ON.includes(kind)) {
      state.calling = null;
      state.called = false;
    }
    switch (kind) {
      case "hand_started":
        Object.assign(state, {
          hand: e.number || 0, top: null, colour: null, direction: 1, pile: 0, discards: 0, handWinner: null,
        });
        state.hands = state.hands.map(() => []);
        state.sizes.fill(0);
        state.uno.fill(false);
        break;
      case "dealer_chosen":
        state.dealer = seat;
        break;
      case "shuffled":
        state.pile = e.cards || 0;
        break;
      case "dealt":
        state.hands[seat] = e.hidden ? null : (e.cards || []).slice();
        state.sizes[seat] = e.count || 0;
        state.pile -= e.count || 0;
        break;
      case "first_card":
        state.top = e.card || null;
        state.colour = e.card ? e.card.colour || null : null;
        state.pile -= 1;
        state.discards += 1;
        break;
      case "colour_chosen":
        state.colour = e.colour || null;
        break;
      case "played":
        removeCard(state.hands[seat], e.card || {});
        state.sizes[seat] = e.cards_left || 0;
        state.called = (!e.jump_in && state.calling === seat && state.called) || Boolean(e.uno);
        state.calling = seat;
        state.uno[seat] = state.called;
        state.top = e.card || null;
        state.colour = (e.card && e.card.colour) || e.colour || null;
        state.discards += 1;
        break;
      case "drew":
        if (state.hands[seat] !== null) {
          if (e.hidden) state.hands[seat] = null;
          else state.hands[seat].push(...(e.cards || []));
        }
        state.sizes[seat] += e.count || 0;
        state.uno[seat] = false;
        state.pile -= e.count || 0;
        break;
      case "direction_changed":
        state.direction = e.direction || 1;
        break;
      case "reshuffled": // the discards but the top card
        state.pile += e.cards || 0;
        state.discards -= e.cards || 0;
        break;
      case "swapped": { // one exchange: the `received` events after it only confirm it
        const other = e.other || 0;
        [state.hands[seat], state.hands[other]] = [state.hands[other], state.hands[seat]];
        [state.sizes[seat], state.sizes[other]] = [state.sizes[other], state.sizes[seat]];
        state.uno[other] = false;
        state.uno[seat] = state.calling === seat && state.called;
        break;
      }
      case "hands_passed": { // every hand moves one seat at once
        const givers = state.hands.map((_, s) => giverOf(s, e.direction || 1, state.players));
        state.hands = givers.map((g) => state.hands[g]);
        state.sizes = givers.map((g) => state.sizes[g]);
        state.uno = state.uno.map((_, s) => s === state.calling && state.called);
        break;
      }
      case "received": // what the swap or pass gave `seat`: the same cards (live: their number only)
        if (!e.hidden) state.hands[seat] = (e.cards || []).slice();
        else if (state.hands[seat] !== null && state.hands[seat].length !== (e.count || 0)) state.hands[seat] = null;
        state.sizes[seat] = e.count || 0;
        if (state.calling === seat) state.uno[seat] = state.called;
        break;
      case "hand_ended":
        (e.points || []).forEach((points, s) => { state.scores[s] += points; });
        state.handWinner = e.winner === undefined ? null : e.winner;
        break;
      case "match_ended":
        state.over = true;
        if (e.totals) state.scores = e.totals.slice();
        break;
      default:
        break;
    }
    for (let s = 0; s < state.players; s += 1) if (state.sizes[s] !== 1) state.uno[s] = false;
    return state;
  }

  /** The states after each of `events` (for tests and tools; the viewer keeps snapshots only). */
  function states(events, players) {
    const state = newState(players);
    return events.map((event) => copyState(applyEvent(state, event)));
  }

  // ---- words and marks --------------------------------------------------------------------------------

  /** The seat an event is about (who acted, or was acted on), or null. */
  function actorOf(kind, e) {
    if (kind === "caught") return e.catcher || 0;
    if (kind === "challenged") return e.challenger || 0;
    if (["hand_started", "shuffled", "first_card", "direction_changed", "reshuffled", "hand_ended",
      "match_ended", "hands_passed"].includes(kind)) return null;
    return e.seat || 0;
  }

  function describe(event, names) {
    const [kind, e] = kindOf(event);
    const who = (seat) => names[seat || 0] || `seat ${seat || 0}`;
    const cards = (n) => `${n || 0} card${n === 1 ? "" : "s"}`;
    const list = (values) => (values || []).map(cardName).join(", ");
    switch (kind) {
      case "hand_started": return `Hand ${e.number || 0} begins`;
      case "dealer_drew": return `${who(e.seat)} draws ${cardName(e.card)} to choose the dealer`;
      case "dealer_chosen": return `${who(e.seat)} deals`;
      case "shuffled": return `The deck is shuffled (${cards(e.cards)}; ${labelOf("shuffle_reason", e.reason)})`;
      case "dealt": return `${who(e.seat)} is dealt ${cards(e.count)}${e.hidden ? "" : `: ${list(e.cards)}`}`;
      case "first_card": return `First card: ${cardName(e.card)}`;
      case "colour_chosen": return `${who(e.seat)} names ${colourName(e.colour)}`;
      case "played": {
        const verb = e.jump_in ? "jumps in with" : "plays";
        const named = e.card && !e.card.colour ? ` naming ${colourName(e.colour)}` : "";
        return `${who(e.seat)} ${verb} ${cardName(e.card)}${named}: ${cards(e.cards_left)} left${e.uno ? ", calls UNO" : ""}`;
      }
      case "drew": {
        const why = e.reason && e.reason !== "draw" ? ` (${e.reason.replace(/_/g, " ")})` : "";
        return `${who(e.seat)} draws ${cards(e.count)}${why}${e.hidden || !e.cards ? "" : `: ${list(e.cards)}`}`;
      }
      case "kept": return `${who(e.seat)} keeps it; the turn ends`;
      case "skipped": return `${who(e.seat)} is skipped`;
      case "direction_changed": return `Play now goes ${(e.direction || 1) > 0 ? "clockwise" : "counter-clockwise"}`;
      case "caught": return `${who(e.catcher)} catches ${who(e.seat)} without UNO`;
      case "catch_passed": return `${who(e.seat)} does not catch`;
      case "accepted": return `${who(e.seat)} accepts the penalty`;
      case "challenged":
        return `${who(e.challenger)} challenges ${who(e.seat)}'s wild draw four: ${e.guilty ? "guilty" : "not guilty"}`;
      case "hand_shown": return `${who(e.seat)} shows their hand to ${who(e.to)}${e.hidden ? "" : `: ${list(e.cards)}`}`;
      case "reshuffled": return `The discards are shuffled into the draw pile (${cards(e.cards)})`;
      case "swapped": return `${who(e.seat)} swaps hands with ${who(e.other)}`;
      case "hands_passed":
        return `Every hand passes one seat ${(e.direction || 1) > 0 ? "clockwise" : "counter-clockwise"}`;
      case "received": return `${who(e.seat)} receives ${cards(e.count)} from ${who(e.giver)}`;
      case "hand_ended": {
        const winner = e.winner === undefined ? "nobody wins" : `${who(e.winner)} wins`;
        return `Hand ends (${labelOf("hand_end", e.reason)}): ${winner}; points ${(e.points || []).join(", ")}`;
      }
      case "match_ended": {
        const winners = (e.winners || []).map(who).join(", ") || "nobody";
        return `Match ends (${labelOf("match_end", e.reason)}): ${winners} won; totals ${(e.totals || []).join(", ")}`;
      }
      default: return kind || "?";
    }
  }

  /** How many cards `events[at]`'s player holds once its play is whole (after the cards it also lays, its
   * swaps and passes); a play still going on at the end of `events` (live) counts as it stands. */
  function heldAfterPlay(events, at) {
    const [, played] = kindOf(events[at]);
    const seat = played.seat || 0;
    let held = played.cards_left || 0;
    for (let i = at + 1; i < events.length; i += 1) {
      const [kind, e] = kindOf(events[i]);
      if (kind === "played" && !e.jump_in && (e.seat || 0) === seat) held = e.cards_left || 0;
      else if (kind === "received" && (e.seat || 0) === seat) held = e.count || 0;
      else if (!PLAY_GOES_ON.includes(kind)) break;
    }
    return held;
  }

  /** What stands out at each event: UNO calls that count (the player holds one card once the play is
   * whole), catches, challenges, faults (by kind), forfeits, and the server's automatic moves.
   * `faults` are the record's or the live feed's (event_index: the events logged before the action
   * applied for the fault; one ahead of `events`, live, is marked when its event arrives; one without
   * an index has no step). `automatic` are the replay JSON's `automatic_events`, the events the text
   * replay marks: one source for both (a live match has none: they are known once it is recorded). */
  function marksOf(events, faults, forfeited, automatic, live) {
    const marks = events.map(() => []);
    events.forEach((event, i) => {
      const [kind, e] = kindOf(event);
      if (kind === "played" && e.uno && heldAfterPlay(events, i) === 1) marks[i].push(["uno", "UNO!"]);
      if (kind === "played" && e.jump_in) marks[i].push(["jump-in", "jump-in"]);
      if (kind === "caught") marks[i].push(["catch", "caught"]);
      if (kind === "challenged") marks[i].push(["challenge", e.guilty ? "challenge: guilty" : "challenge: not guilty"]);
    });
    const forfeitAt = {}; // seat -> index of the event at which it forfeited
    const lastFault = {};
    (faults || []).forEach((fault) => {
      if (fault.event_index === undefined) return;
      if (live && fault.event_index >= events.length) return; // its event has not arrived yet
      const at = Math.min(fault.event_index, events.length - 1);
      if (at < 0) return;
      const seat = fault.seat || 0;
      const kind = labelOf("fault_kind", fault.kind);
      marks[at].push([`fault ${kind.replace(/ /g, "-")}`, kind === "timeout" ? "timeout" : `fault: ${kind}`]);
      lastFault[seat] = at;
      if (fault.forfeited && forfeitAt[seat] === undefined) {
        marks[at].push(["forfeit", "forfeit"]);
        forfeitAt[seat] = at;
      }
    });
    // a disconnected seat forfeits when its grace period runs out, with no fault of its own: from its last fault
    (forfeited || []).forEach((seat) => {
      if (forfeitAt[seat] === undefined && lastFault[seat] !== undefined) {
        marks[lastFault[seat]].push(["forfeit", "forfeit"]);
        forfeitAt[seat] = lastFault[seat];
      }
    });
    (automatic || []).forEach((i) => { if (i >= 0 && i < events.length) marks[i].push(["auto", "automatic"]); });
    return { marks, forfeitAt };
  }

  /** A fault as the summary lists it (the server writes the replay's; live ones are added here). */
  function faultItem(fault, names) {
    const item = document.createElement("li");
    const seat = fault.seat || 0;
    const kind = labelOf("fault_kind", fault.kind);
    item.className = `fault${fault.forfeited ? " forfeit" : ""}`;
    if (fault.event_index !== undefined) {
      const link = document.createElement("a");
      link.href = `#step=${fault.event_index + 1}`;
      link.textContent = `step ${fault.event_index + 1}`;
      item.append(link);
    } else {
      item.append("step unknown");
    }
    const bot = document.createElement("strong");
    bot.textContent = names[seat] || `seat ${seat}`;
    item.append(": ", bot, ` ${kind}`);
    if (fault.forfeited) {
      const forfeit = document.createElement("strong");
      forfeit.textContent = "→ forfeited";
      item.append(" ", forfeit);
    }
    const applied = (fault.applied && fault.applied.text) || "?";
    item.append(` (strike ${fault.strikes || 0}; applied: ${applied})${fault.detail ? ` — ${fault.detail}` : ""}`);
    return item;
  }

  // ---- the viewer -------------------------------------------------------------------------------------

  class Viewer {
    constructor(settings) {
      this.settings = settings;
      this.names = settings.bots;
      this.players = settings.bots.length;
      this.live = settings.mode === "live";
      this.events = [];
      this.faults = [];
      this.forfeited = [];
      this.automatic = [];
      this.toMove = null; // per step, the seat whose decision comes next (a replay's `to_move`), or null
      this.endFromResult = null; // the step of a match_ended made from the result, if the log has none
      this.marks = [];
      this.forfeitAt = {};
      this.snapshots = [newState(this.players)];
      this.handStarts = []; // steps at which a hand begins
      this.handTotals = []; // totals after each hand
      this.handEnds = []; // steps at which a hand ends
      this.step = 0;
      this.timer = null;
      this.faceUp = true;
      this.$ = (id) => document.getElementById(id);
      this.buildSeats();
      this.bindControls();
      this.drawKeys();
    }

    // -- loading
    load(replay) {
      this.faults = (replay.finished && replay.finished.faults) || [];
      this.forfeited = (replay.summary && replay.summary.forfeited) || [];
      this.automatic = replay.automatic_events || [];
      this.toMove = Array.isArray(replay.to_move) ? replay.to_move : null;
      if (replay.summary && replay.summary.bots) this.names = replay.summary.bots;
      const events = (replay.events || []).slice();
      const result = replay.finished && replay.finished.result;
      this.endFromResult = null;
      if (result && !events.some((event) => kindOf(event)[0] === "match_ended")) {
        events.push({ match_ended: { reason: result.reason, winners: result.winners || [], totals: result.totals || [] } });
        this.endFromResult = events.length;
      }
      this.events = [];
      this.snapshots = [newState(this.players)];
      this.handStarts = [];
      this.handTotals = [];
      this.handEnds = [];
      this.$("steps").textContent = "";
      this.append(events);
      const wanted = this.hashStep();
      this.go(wanted !== null ? wanted : 1);
    }

    append(events) {
      if (!events.length) return;
      const first = this.events.length;
      this.events.push(...events);
      const totals = this.handTotals.length ? this.handTotals[this.handTotals.length - 1].slice() : Array(this.players).fill(0);
      events.forEach((event, k) => {
        const [kind, e] = kindOf(event);
        if (kind === "hand_started") this.handStarts.push(first + k + 1);
        if (kind === "hand_ended") {
          this.handEnds.push(first + k + 1);
          (e.points || []).forEach((p, s) => { totals[s] += p; });
          this.handTotals.push(totals.slice());
        }
      });
      this.listSteps(first);
      this.refreshMarks();
      const scrubber = this.$("scrubber");
      scrubber.max = String(Math.max(1, this.events.length));
      this.drawChart();
      if (this.live) { // the summary's totals, as hands end
        const totals = this.handTotals.length ? this.handTotals[this.handTotals.length - 1] : [];
        document.querySelectorAll("#players tr[data-seat] td.total").forEach((cell) => {
          const total = totals[Number(cell.parentElement.dataset.seat)];
          cell.textContent = total === undefined ? "" : String(total);
        });
      }
    }

    /** Marks of every event again: arriving events and faults change earlier ones (a play's UNO call
     * counts once the play is whole; a fault's event may come after it, live). */
    refreshMarks() {
      const found = marksOf(this.events, this.faults, this.forfeited, this.automatic, this.live);
      this.marks = found.marks;
      this.forfeitAt = found.forfeitAt;
      Array.from(this.$("steps").children).forEach((item, i) => this.markItem(item, i));
      this.drawTimeline();
    }

    /** A fault from the live feed: listed, and marked at its step (now, or when its event arrives). */
    addFault(fault) {
      this.faults.push(fault);
      const holder = this.$("faults");
      holder.hidden = false;
      this.$("fault-count").textContent = String(this.faults.length);
      this.$("fault-list").append(faultItem(fault, this.names));
      this.refreshMarks();
      if (this.step > 0) this.render(this.step);
    }

    // -- state at a step
    stateAt(step) {
      const slot = Math.floor(step / SNAPSHOT);
      while (this.snapshots.length <= slot) {
        const state = copyState(this.snapshots[this.snapshots.length - 1]);
        const from = (this.snapshots.length - 1) * SNAPSHOT;
        for (let i = from; i < from + SNAPSHOT; i += 1) applyEvent(state, this.events[i]);
        this.snapshots.push(state);
      }
      const state = copyState(this.snapshots[slot]);
      for (let i = slot * SNAPSHOT; i < step; i += 1) applyEvent(state, this.events[i]);
      return state;
    }

    // -- moving
    go(step) {
      if (!this.events.length) return;
      const target = Math.max(1, Math.min(this.events.length, Math.round(step)));
      const previous = this.step;
      this.step = target;
      this.render(previous);
    }

    hashStep() {
      const match = /step=(\d+)/.exec(window.location.hash);
      return match ? Number(match[1]) : null;
    }

    nextHand() {
      const next = this.handStarts.find((s) => s > this.step);
      this.go(next !== undefined ? next : this.events.length);
    }

    previousHand() {
      const earlier = this.handStarts.filter((s) => s < this.step);
      this.go(earlier.length ? earlier[earlier.length - 1] : 1);
    }

    play() {
      if (this.timer !== null) return this.pause();
      if (this.step >= this.events.length && !this.live) this.go(1);
      const tick = () => {
        if (this.step >= this.events.length) {
          if (!this.live) return this.pause();
        } else {
          this.go(this.step + 1);
        }
        this.timer = window.setTimeout(tick, BASE_DELAY_MS / Number(this.$("speed").value));
      };
      this.timer = window.setTimeout(tick, 0);
      this.$("play").textContent = "⏸ pause";
      this.$("play").setAttribute("aria-pressed", "true");
      return undefined;
    }

    pause() {
      if (this.timer !== null) window.clearTimeout(this.timer);
      this.timer = null;
      this.$("play").textContent = "▶ play";
      this.$("play").setAttribute("aria-pressed", "false");
    }

    bindControls() {
      const on = (id, what) => this.$(id).addEventListener("click", what);
      on("first", () => this.go(1));
      on("last", () => this.go(this.events.length));
      on("prev", () => this.go(this.step - 1));
      on("next", () => this.go(this.step + 1));
      on("prev-hand", () => this.previousHand());
      on("next-hand", () => this.nextHand());
      on("play", () => this.play());
      this.$("scrubber").addEventListener("input", (e) => this.go(Number(e.target.value)));
      const faceUp = this.$("face-up");
      if (faceUp) faceUp.addEventListener("change", () => { this.faceUp = faceUp.checked; this.render(this.step); });
      this.$("steps").addEventListener("click", (e) => {
        const item = e.target.closest("li[data-step]");
        if (item) { e.preventDefault(); this.go(Number(item.dataset.step)); }
      });
      this.$("timeline").addEventListener("click", (e) => {
        const marker = e.target.closest("[data-step]");
        if (marker) { e.preventDefault(); this.go(Number(marker.dataset.step)); }
      });
      window.addEventListener("hashchange", () => {
        const wanted = this.hashStep();
        if (wanted !== null && wanted !== this.step) this.go(wanted);
      });
      document.addEventListener("keydown", (e) => this.key(e));
    }

    key(e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const target = e.target;
      const tag = target && target.tagName;
      if (tag === "SELECT" || tag === "TEXTAREA" || (tag === "INPUT" && target.type !== "range")) return;
      if (tag === "BUTTON" && (e.key === " " || e.key === "Enter")) return; // the button's own click
      const actions = {
        ArrowLeft: () => this.go(this.step - 1), ArrowRight: () => this.go(this.step + 1),
        ArrowUp: () => this.previousHand(), PageUp: () => this.previousHand(),
        ArrowDown: () => this.nextHand(), PageDown: () => this.nextHand(),
        Home: () => this.go(1), End: () => this.go(this.events.length), " ": () => this.play(),
      };
      const action = actions[e.key];
      if (action) { e.preventDefault(); action(); }
    }

    // -- drawing
    buildSeats() {
      const counts = SIDES[this.players] || [this.players, 0, 0, 0];
      const sides = ["bottom", "left", "top", "right"];
      const table = this.$("table");
      table.dataset.players = String(this.players);
      this.seatElements = [];
      let seat = 0;
      counts.forEach((count, side) => {
        const holder = table.querySelector(`.side.${sides[side]}`);
        for (let k = 0; k < count; k += 1, seat += 1) {
          const element = document.createElement("div");
          element.className = "seat";
          element.dataset.seat = String(seat);
          element.innerHTML = '<div class="seat-head"><span class="name"></span> <span class="seat-no"></span>'
            + ' <span class="badges"></span></div><div class="seat-facts"><span class="size"></span>'
            + ' · <span class="score"></span></div><div class="cards"></div>';
          element.querySelector(".name").textContent = this.names[seat] || `seat ${seat}`;
          element.querySelector(".seat-no").textContent = `seat ${seat}`;
          holder.append(element);
          this.seatElements.push(element);
        }
      });
    }

    render(previous) {
      const state = this.stateAt(this.step);
      const index = this.step - 1;
      const event = this.events[index];
      const [kind, e] = kindOf(event);
      const actor = actorOf(kind, e);
      const toMove = this.toMoveAt(index);
      const marks = this.marks[index] || [];
      // the seats
      this.seatElements.forEach((element, seat) => {
        const size = state.sizes[seat];
        const sizeElement = element.querySelector(".size");
        sizeElement.dataset.size = String(size);
        sizeElement.textContent = `${size} card${size === 1 ? "" : "s"}`;
        element.querySelector(".score").textContent = `score ${state.scores[seat]}`;
        const badges = [];
        if (state.dealer === seat) badges.push(["dealer", "dealer"]);
        if (state.uno[seat]) badges.push(["uno", "UNO!"]);
        if (this.forfeitAt[seat] !== undefined && index >= this.forfeitAt[seat]) badges.push(["forfeit", "forfeited"]);
        if (kind === "hand_ended" && state.handWinner === seat) badges.push(["won", "wins the hand"]);
        const badgeHolder = element.querySelector(".badges");
        badgeHolder.textContent = "";
        badges.forEach(([cls, text]) => badgeHolder.append(this.badge(cls, text)));
        element.classList.toggle("to-move", toMove === seat);
        element.classList.toggle("just-played", actor === seat);
        element.title = [actor === seat ? "just played" : "", toMove === seat ? "to move" : ""]
          .filter(Boolean).join("; ");
        const cards = element.querySelector(".cards");
        cards.textContent = "";
        const hand = state.hands[seat];
        const shown = hand !== null && (this.faceUp || this.live) && hand.length === size;
        cards.classList.toggle("down", !shown);
        if (shown) {
          hand.slice().sort((a, b) => (a.index || 0) - (b.index || 0)).forEach((c) => cards.append(cardElement(c, true)));
        } else {
          for (let k = 0; k < Math.min(size, 12); k += 1) cards.append(backElement());
          if (size > 12) cards.append(document.createTextNode(` +${size - 12}`));
        }
      });
      // the centre
      const top = this.$("top-card");
      top.textContent = "";
      if (state.top) top.append(cardElement(state.top, false));
      const colour = colourName(state.colour);
      const named = this.$("named-colour");
      named.textContent = colour || "–";
      named.className = colour ? `swatch c-${colour}` : "";
      this.$("draw-pile").textContent = String(state.pile);
      this.$("discards").textContent = String(state.discards);
      this.$("direction").textContent = state.direction > 0 ? "↻" : "↺";
      this.$("direction-name").textContent = state.direction > 0 ? "clockwise" : "counter-clockwise";
      this.$("hand-number").textContent = state.hand ? String(state.hand) : "–";
      // what happens now
      const now = this.$("now");
      now.textContent = "";
      const label = document.createElement("span");
      label.className = "step-no";
      label.textContent = `Step ${this.step}`;
      now.append(label, ` ${describe(event, this.names)} `);
      marks.forEach(([cls, text]) => now.append(this.badge(cls, text)));
      if (toMove !== null) {
        const next = document.createElement("span");
        next.className = "next";
        next.textContent = `▶ ${this.names[toMove] || `seat ${toMove}`} to move`;
        now.append(" ", next);
      }
      now.className = `now${marks.length ? " marked" : ""}`;
      // controls
      this.$("scrubber").value = String(this.step);
      this.$("step-label").textContent = `step ${this.step} / ${this.events.length}${this.live ? " (live)" : ""}`;
      this.$("step-link").href = `#step=${this.step}`;
      if (!this.live || this.hashStep() !== null) history.replaceState(null, "", `#step=${this.step}`);
      const list = this.$("steps");
      const old = list.querySelector("li.current");
      if (old) old.classList.remove("current");
      const item = list.children[index];
      if (item) {
        item.classList.add("current");
        if (item.offsetTop < list.scrollTop || item.offsetTop + item.offsetHeight > list.scrollTop + list.clientHeight) {
          list.scrollTop = item.offsetTop - list.clientHeight / 2;
        }
      }
      this.drawChartCursor();
      return previous;
    }

    /** The seat whose decision comes next after the step at `index` (0-based), or null (unknown, between
     * hands, or over: a match_ended the viewer added from the result has none). */
    toMoveAt(index) {
      if (!this.toMove || index >= this.toMove.length) return null;
      const seat = this.toMove[index];
      return Number.isInteger(seat) && seat >= 0 && seat < this.players ? seat : null;
    }

    badge(cls, text) {
      const element = document.createElement("span");
      element.className = `badge ${cls}`;
      element.textContent = text;
      return element;
    }

    listSteps(from) {
      const list = this.$("steps");
      const fragment = document.createDocumentFragment();
      for (let i = from; i < this.events.length; i += 1) {
        const item = document.createElement("li");
        item.dataset.step = String(i + 1);
        const [kind] = kindOf(this.events[i]);
        item.className = `k-${kind}`;
        const link = document.createElement("a");
        link.href = `#step=${i + 1}`;
        link.textContent = String(i + 1);
        item.append(link, ` ${describe(this.events[i], this.names)}`);
        if (i + 1 === this.endFromResult) {
          item.classList.add("from-result");
          item.title = "from the result: the server ended the match inside a hand, so its log has no end";
        }
        fragment.append(item);
      }
      list.append(fragment);
    }

    markItem(item, i) {
      const marks = this.marks[i] || [];
      const shown = marks.map(([cls]) => cls).join("|");
      if ((item.dataset.marks || "") === shown) return;
      item.dataset.marks = shown;
      item.querySelectorAll(".badge").forEach((b) => b.remove());
      Array.from(item.classList).filter((c) => c.startsWith("mark-")).forEach((c) => item.classList.remove(c));
      item.classList.toggle("marked", marks.length > 0);
      marks.forEach(([cls, text]) => {
        item.append(" ", this.badge(cls, text));
        cls.split(" ").forEach((c) => item.classList.add(`mark-${c}`));
      });
    }

    drawTimeline() {
      const timeline = this.$("timeline");
      timeline.textContent = "";
      const total = Math.max(1, this.events.length);
      const at = (step) => `${(100 * (step - 1)) / Math.max(1, total - 1)}%`;
      this.handStarts.forEach((step, k) => {
        const tick = document.createElement("a");
        tick.className = "tick hand";
        tick.dataset.step = String(step);
        tick.href = `#step=${step}`;
        tick.style.left = at(step);
        tick.title = `hand ${k + 1}`;
        tick.textContent = String(k + 1);
        timeline.append(tick);
      });
      this.marks.forEach((marks, i) => {
        const shown = marks.filter(([cls]) => cls !== "auto");
        if (!shown.length) return;
        const marker = document.createElement("a");
        marker.className = `tick marker ${shown.map(([cls]) => cls).join(" ")}`;
        marker.dataset.step = String(i + 1);
        marker.href = `#step=${i + 1}`;
        marker.style.left = at(i + 1);
        marker.title = `step ${i + 1}: ${shown.map(([, text]) => text).join(", ")}`;
        timeline.append(marker);
      });
    }

    drawKeys() {
      document.querySelectorAll("svg.key[data-seat]").forEach((svg) => {
        const seat = Number(svg.dataset.seat);
        svg.textContent = "";
        const group = this.series(seat);
        group.append(this.line([[0, 6], [36, 6]], seat), this.marker(18, 6, seat));
        svg.append(group);
      });
    }

    series(seat) {
      const group = document.createElementNS(SVG, "g");
      group.setAttribute("class", `series s${seat % SERIES.length}`);
      return group;
    }

    line(points, seat) {
      const line = document.createElementNS(SVG, "polyline");
      line.setAttribute("points", points.map(([x, y]) => `${x},${y}`).join(" "));
      line.setAttribute("stroke-dasharray", SERIES[seat % SERIES.length][0]);
      return line;
    }

    marker(x, y, seat) {
      const shape = SERIES[seat % SERIES.length][1];
      const r = 3.5;
      let element;
      if (shape === "circle") {
        element = document.createElementNS(SVG, "circle");
        element.setAttribute("cx", x); element.setAttribute("cy", y); element.setAttribute("r", r);
      } else {
        const paths = {
          square: `M${x - r} ${y - r}h${2 * r}v${2 * r}h${-2 * r}Z`,
          triangle: `M${x} ${y - r - 1}L${x + r + 0.5} ${y + r}L${x - r - 0.5} ${y + r}Z`,
          diamond: `M${x} ${y - r - 1}L${x + r + 1} ${y}L${x} ${y + r + 1}L${x - r - 1} ${y}Z`,
          cross: `M${x - r} ${y - r}L${x + r} ${y + r}M${x + r} ${y - r}L${x - r} ${y + r}`,
        };
        element = document.createElementNS(SVG, "path");
        element.setAttribute("d", paths[shape]);
        if (shape === "cross") element.setAttribute("class", "cross");
      }
      return element;
    }

    drawChart() {
      const svg = this.$("score-chart");
      svg.textContent = "";
      const [width, height, left, bottom, top, right] = [320, 140, 34, 20, 8, 8];
      const hands = this.handTotals.length;
      const target = this.settings.target || 0;
      const highest = Math.max(1, target, ...this.handTotals.flat());
      const x = (hand) => left + ((width - left - right) * hand) / Math.max(1, hands);
      const y = (score) => height - bottom - ((height - bottom - top) * Math.max(0, score)) / highest;
      const axis = document.createElementNS(SVG, "path");
      axis.setAttribute("class", "axis");
      axis.setAttribute("d", `M${left} ${top}V${height - bottom}H${width - right}`);
      svg.append(axis);
      const text = (tx, ty, value, anchor) => {
        const element = document.createElementNS(SVG, "text");
        element.setAttribute("x", tx); element.setAttribute("y", ty);
        element.setAttribute("text-anchor", anchor);
        element.textContent = value;
        svg.append(element);
      };
      text(left - 4, y(highest) + 4, String(highest), "end");
      text(left - 4, y(0) + 4, "0", "end");
      text(width - right, height - 4, hands ? `hand ${hands}` : "no hand ended yet", "end");
      if (target) {
        const goal = document.createElementNS(SVG, "path");
        goal.setAttribute("class", "target");
        goal.setAttribute("d", `M${left} ${y(target)}H${width - right}`);
        svg.append(goal);
      }
      const cursor = document.createElementNS(SVG, "path");
      cursor.setAttribute("class", "cursor");
      cursor.id = "chart-cursor";
      svg.append(cursor);
      for (let seat = 0; seat < this.players; seat += 1) {
        const points = [[x(0), y(0)], ...this.handTotals.map((totals, h) => [x(h + 1), y(totals[seat])])];
        const group = this.series(seat);
        group.dataset.seat = String(seat);
        group.append(this.line(points, seat));
        points.slice(1).forEach(([px, py], h) => {
          const marker = this.marker(px, py, seat);
          const title = document.createElementNS(SVG, "title");
          title.textContent = `${this.names[seat]} after hand ${h + 1}: ${this.handTotals[h][seat]}`;
          marker.append(title);
          group.append(marker);
        });
        svg.append(group);
      }
      this.chartX = x;
      this.chartSpan = [top, height - bottom];
    }

    drawChartCursor() {
      const cursor = this.$("chart-cursor");
      if (!cursor || !this.chartX) return;
      const ended = this.handEnds.filter((s) => s <= this.step).length; // hands over by this step
      const at = this.chartX(ended);
      cursor.setAttribute("d", `M${at} ${this.chartSpan[0]}V${this.chartSpan[1]}`);
    }

    // -- live
    reset() {
      this.pause();
      this.events = [];
      this.faults = [];
      this.$("fault-list").textContent = "";
      this.$("faults").hidden = true;
      this.marks = [];
      this.snapshots = [newState(this.players)];
      this.handStarts = [];
      this.handTotals = [];
      this.handEnds = [];
      this.step = 0;
      this.$("steps").textContent = "";
      this.drawTimeline();
      this.drawChart();
    }

    /** Follow the match's feed: `start` (from its first event: forget what came before), `events`, `end`.
     * The browser resumes a dropped stream by itself (Last-Event-ID); one the server refused (busy) or
     * closed is opened again a little later, from the start, unless the match was recorded meanwhile. */
    follow(attempt = 0) {
      const status = this.$("live-status");
      const source = new EventSource(this.settings.events_url);
      let over = false;
      source.addEventListener("start", () => {
        this.reset();
        status.textContent = "live: the match has started";
      });
      source.addEventListener("events", (message) => {
        const following = this.$("follow").checked || this.step === this.events.length;
        this.append(JSON.parse(message.data));
        status.textContent = `live: ${this.events.length} events, hand ${this.handStarts.length}`;
        if (following) this.go(this.events.length);
      });
      source.addEventListener("fault", (message) => this.addFault(JSON.parse(message.data)));
      source.addEventListener("end", (message) => {
        over = true;
        source.close();
        const end = JSON.parse(message.data || "{}");
        if (end.recorded === false) {
          status.textContent = `the match ended without a result${end.reason ? `: ${end.reason}` : ""}`;
        } else {
          this.ended(status);
        }
      });
      source.addEventListener("error", () => {
        if (over || source.readyState !== EventSource.CLOSED) return; // else it reconnects by itself
        status.textContent = "live: the stream was refused; trying again…";
        fetch(this.settings.json_url, { cache: "no-store" }).then((response) => {
          if (response.ok) this.ended(status);
          else if (attempt < LIVE_RELOAD_TRIES) window.setTimeout(() => this.follow(attempt + 1), 3000);
          else status.textContent = "live: the stream is not available: reload later";
        }, () => window.setTimeout(() => this.follow(attempt + 1), 3000));
      });
    }

    /** The match is over: load its replay once it is recorded (the page reloads at the same step). */
    ended(status) {
      status.textContent = "finished: loading the replay…";
      let tries = 0;
      const look = () => {
        tries += 1;
        fetch(this.settings.json_url, { cache: "no-store" }).then((response) => {
          if (response.ok) {
            history.replaceState(null, "", `#step=${Math.max(1, this.events.length)}`);
            window.location.reload();
          } else if (tries < LIVE_RELOAD_TRIES) {
            window.setTimeout(look, 1000);
          } else {
            status.textContent = "finished, but its replay is not recorded (yet): reload later";
          }
        }, () => { if (tries < LIVE_RELOAD_TRIES) window.setTimeout(look, 1000); });
      };
      look();
    }
  }

  window.UnoViewer = { applyEvent, newState, states, describe, marksOf, cardName, heldAfterPlay };

  function start() {
    const settings = pageSettings();
    const viewer = new Viewer(settings);
    window.unoViewer = viewer;
    if (settings.mode === "live") {
      viewer.follow();
      return;
    }
    fetch(settings.json_url).then((response) => {
      if (!response.ok) throw new Error(`${settings.json_url}: HTTP ${response.status}`);
      return response.json();
    }).then((replay) => viewer.load(replay)).catch((error) => {
      document.getElementById("now").textContent = `The replay could not be loaded: ${error.message}`;
    });
  }

  if (document.getElementById("viewer-settings")) start();
}());
