// The room's clock on a tournament's big screen: full screen (the button, or ?view=clock), the
// round's minutes left or its coups left, large, its stage and round, the next round's limits,
// a break counted down, and alerts seen and heard: the round's last coup, the round's end and
// the next round's start (a Web Audio beep, off until a click turns it on, as browsers
// require). It draws from the tournament's view (`GET /tournaments/{t}`) given to `take`,
// counting down between reads, and stands still while the tournament is paused.
"use strict";

const RoomClock = (() => {
  const { money, minutes, t } = Sabot;
  const TICK_MS = 250;
  const ALERT_MS = 20000;  // how long the round's end and the next round's start stay shown
  const TONE_HZ = 880;
  const byId = id => document.getElementById(id);
  let reading = null;  // the latest view and when it was read
  let audio = null;  // the AudioContext, made on the click that turns the sound on
  let sound = false;
  let alertUntil = 0;

  // `times` short tones, if the sound is on; counted on the board (data-beeps) either way.
  function beep(times) {
    const board = byId("clock-board");
    if (!sound || !audio) return;
    board.dataset.beeps = String(Number(board.dataset.beeps || 0) + times);
    for (let i = 0; i < times; i++) {
      const start = audio.currentTime + i * 0.4;
      const tone = audio.createOscillator();
      const volume = audio.createGain();
      tone.frequency.value = TONE_HZ;
      volume.gain.setValueAtTime(0.3, start);
      volume.gain.exponentialRampToValueAtTime(0.001, start + 0.3);
      tone.connect(volume).connect(audio.destination);
      tone.start(start);
      tone.stop(start + 0.3);
    }
  }

  function raise(text, times, lasting) {
    const node = byId("alert");
    node.textContent = text;
    node.hidden = false;
    alertUntil = lasting ? performance.now() + ALERT_MS : Infinity;
    const board = byId("clock-board");
    board.dataset.alerts = String(Number(board.dataset.alerts || 0) + 1);
    board.classList.remove("flash");
    void board.offsetWidth;  // restart the flash's animation
    board.classList.add("flash");
    beep(times);
  }

  const inRound = v => v.status !== "finished" && (v.coups_left !== null || v.seconds_left !== null);

  // What changed since the last view: the last coup begun, the round over, a round begun.
  function alerts(before, v) {
    if (v.last_coup && !(before && before.last_coup && before.round === v.round)) {
      raise(t("clock.last-coup", { round: v.round }), 2, false);
    } else if (before && inRound(before) && before.round === v.round && !inRound(v)) {
      raise(t("clock.round-end", { round: v.round }), 3, true);
    } else if (before && before.round < v.round && inRound(v)) {
      raise(t("clock.round-begins", { round: v.round }), 1, true);
    } else if (!v.last_coup && alertUntil === Infinity) {
      alertUntil = 0;
    }
  }

  function take(view) {
    const before = reading && reading.view;
    reading = { view, at: performance.now() };
    if (before) alerts(before, view);
    draw();
  }

  function draw() {
    if (!reading) return;
    const v = reading.view;
    const gone = Sabot.pause.paused || v.status === "paused" ? 0 : (performance.now() - reading.at) / 1000;
    let big = "–";
    let caption = "";
    const next = t("clock.about-to-begin", { round: v.round + 1 });
    if (v.status === "finished") {
      big = t("clock.finished");
      caption = v.winner ? t("tournament.winner", { names: v.winner }) : "";
    } else if (v.status === "registering") {
      caption = t("clock.registration");
    } else if (v.break_seconds_left !== null) {
      const left = v.break_seconds_left - gone;
      big = minutes(left);
      caption = left > 0 ? t("clock.break", { round: v.round + 1 }) : next;
    } else if (v.seconds_left !== null) {
      big = minutes(v.seconds_left - gone);
      caption = t("clock.left-in-round", { round: v.round }) + (v.coups_left === null ? ""
        : ` · ${Sabot.coupsLeft(v.coups_left)}`);
    } else if (v.coups_left !== null) {
      big = String(v.coups_left);
      caption = t(v.coups_left === 1 ? "clock.coup" : "clock.coups");
    } else {
      caption = next;
    }
    const coming = v.break_seconds_left !== null && v.status !== "finished";  // a break: what follows it
    byId("big-round").textContent = t("clock.round", { stage: v.stage, round: v.round + (coming ? 1 : 0) });
    byId("big-clock").textContent = big;
    byId("big-clock").classList.toggle("word", !/^[\d:–]+$/.test(big));  // "Finished": smaller
    byId("big-caption").textContent = caption;
    const limits = v.next_limits;
    byId("next-limits").textContent = limits && v.status !== "finished"
      ? t("clock.next-limits", { min: money(limits.min_stake), max: money(limits.max_stake) }) : "";
    if (performance.now() > alertUntil) byId("alert").hidden = true;
  }

  function fullScreen(on) {
    document.body.classList.toggle("clock-mode", on);
    byId("clock-board").hidden = !on;
    byId("numbers").hidden = on;
    byId("fullscreen").textContent = t(on ? "clock.leave-full-screen" : "clock.full-screen");
  }

  function start() {
    byId("fullscreen").addEventListener("click", () => {
      const on = !document.body.classList.contains("clock-mode");
      fullScreen(on);
      if (on && document.documentElement.requestFullscreen) {
        document.documentElement.requestFullscreen().catch(() => {});  // refused: the mode still shows
      } else if (!on && document.fullscreenElement) {
        document.exitFullscreen().catch(() => {});
      }
    });
    document.addEventListener("fullscreenchange", () => {
      if (!document.fullscreenElement) fullScreen(false);
    });
    byId("sound").addEventListener("click", () => {
      sound = !sound;
      if (sound && !audio) audio = new AudioContext();
      const button = byId("sound");
      button.textContent = t(sound ? "clock.sound-on" : "clock.sound-off");
      button.setAttribute("aria-pressed", String(sound));
      if (sound) beep(1);
    });
    if (new URLSearchParams(location.search).get("view") === "clock") fullScreen(true);
    setInterval(draw, TICK_MS);
  }

  start();
  return { take };
})();
