'use strict';
// A long-lived Node process that runs Pokemon Showdown's simulator in-process and speaks JSON lines
// on stdin/stdout: one request object per line in, one response object per line out, in order.
//
//   {"id": 7, "cmd": "start", ...}  ->  {"id": 7, "ok": true, "result": {...}}
//                                   or  {"id": 7, "ok": false, "error": "...", "stack": "..."}
//
// Python drives it through envs/pokejax/reference/showdown.py, which documents every command.
// Nothing but responses is written to stdout (Showdown's own warnings go to stderr), so that a line
// that does not parse is a real protocol failure.

const readline = require('readline');

const showdown = require('pokemon-showdown');
const {Battle, Dex, PRNG, Pokemon, Teams} = showdown;
const SHOWDOWN_VERSION = require('pokemon-showdown/package.json').version;

// console.log from inside Showdown would corrupt the protocol: send it to stderr.
console.log = (...args) => console.error(...args);

const battles = new Map();
let scratchBattle = null;

// A Gen 1 battle for commands that need Showdown's Pokemon or battle methods outside a real battle;
// returns its p1 active Pokemon.
function scratchPokemon() {
	if (!scratchBattle) {
		const team = [{species: 'Mew', moves: ['pound'], level: 100}];
		scratchBattle = new Battle({formatid: 'gen1customgame', p1: {name: 'p1', team}, p2: {name: 'p2', team}});
	}
	return scratchBattle.sides[0].pokemon[0];
}

function getBattle(name) {
	const entry = battles.get(name);
	if (!entry) throw new Error(`no battle named ${JSON.stringify(name)} (start it first)`);
	return entry;
}

// The log without its wall-clock timestamps (|t:|...), which differ from run to run.
function newLogLines(entry) {
	const lines = entry.battle.log.slice(entry.logPos).filter(line => !line.startsWith('|t:|'));
	entry.logPos = entry.battle.log.length;
	return lines;
}

const BOOSTS = ['atk', 'def', 'spa', 'spd', 'spe', 'accuracy', 'evasion'];
const STATS = ['atk', 'def', 'spa', 'spd', 'spe'];

// Effect state fields as plain JSON (references to Pokemon become their slot, effects their id).
function plainEffectState(state) {
	const out = {};
	for (const [key, value] of Object.entries(state || {})) {
		if (key === 'target' || key === 'effectOrder') continue;
		if (value && typeof value === 'object') {
			if (value.side && value.position !== undefined) out[key] = `${value.side.id}:${value.position}`;
			else if (value.id !== undefined && value.effectType) out[key] = value.id;
			else if (Array.isArray(value)) out[key] = value.map(v => (v && v.id !== undefined ? v.id : v));
			else out[key] = JSON.parse(JSON.stringify(value, (k, v) => (k === 'target' ? undefined : v)));
		} else {
			out[key] = value;
		}
	}
	return out;
}

function pokemonState(pokemon) {
	const volatiles = {};
	for (const [id, state] of Object.entries(pokemon.volatiles)) volatiles[id] = plainEffectState(state);
	return {
		species: pokemon.species.id,
		level: pokemon.level,
		hp: pokemon.hp,
		maxhp: pokemon.maxhp,
		status: pokemon.status,
		statusState: plainEffectState(pokemon.statusState),
		fainted: pokemon.fainted,
		isActive: pokemon.isActive,
		position: pokemon.position,
		types: pokemon.getTypes(),
		storedStats: Object.fromEntries(STATS.map(s => [s, pokemon.storedStats[s]])),
		speed: pokemon.speed,
		modifiedStats: Object.fromEntries(STATS.map(s => [s, pokemon.modifiedStats ? pokemon.modifiedStats[s] : null])),
		boosts: Object.fromEntries(BOOSTS.map(b => [b, pokemon.boosts[b]])),
		moves: pokemon.moveSlots.map(slot => ({id: slot.id, pp: slot.pp, maxpp: slot.maxpp, disabled: !!slot.disabled})),
		baseMoves: pokemon.baseMoveSlots.map(slot => ({id: slot.id, pp: slot.pp})),
		volatiles,
		transformed: pokemon.transformed,
		lastMove: pokemon.lastMove ? pokemon.lastMove.id : null,
	};
}

function sideState(side) {
	const sideConditions = {};
	for (const [id, state] of Object.entries(side.sideConditions)) sideConditions[id] = plainEffectState(state);
	return {
		id: side.id,
		pokemonLeft: side.pokemonLeft,
		// side.pokemon is reordered by switches: keep that order, it is what "switch N" refers to
		pokemon: side.pokemon.map(pokemonState),
		sideConditions,
		// Gen 1's choice memory: what "Fight" runs, the slot that pays PP, what the foe saw
		lastSelectedMove: side.lastSelectedMove,
		lastSelectedMoveSlot: side.lastSelectedMoveSlot,
		lastEnemySelectedMove: side.lastEnemySelectedMove,
		lastEnemyMove: side.lastEnemyMove ? side.lastEnemyMove.id : null,
	};
}

function battleState(battle) {
	return {
		turn: battle.turn,
		prng: battle.prng.getSeed(),
		ended: battle.ended,
		winner: battle.winner === undefined ? null : battle.winner,
		lastDamage: battle.lastDamage,
		sides: battle.sides.map(sideState),
	};
}

function tracePrng(prng, calls) {
	const next = prng.rng.next.bind(prng.rng);
	prng.rng.next = () => {
		const value = next();
		const frames = new Error().stack.split('\n').slice(2)
			.map(line => line.trim().split(' ')[1])
			.filter(name => name && !name.startsWith('PRNG.') && !name.startsWith('Object.'));
		calls.push({value, by: frames.slice(0, 6).join(' < ')});
		return value;
	};
}

function snapshot(entry, options = {}) {
	const battle = entry.battle;
	const result = {
		format: battle.format.id,
		turn: battle.turn,
		ended: battle.ended,
		winner: battle.ended ? battle.winner || '' : null,
		requests: battle.sides.map(side => side.activeRequest),
		log: newLogLines(entry),
	};
	if (options.state !== false) result.state = battleState(battle);
	if (entry.prngCalls) result.prngCalls = entry.prngCalls.splice(0);
	if (options.full) result.full = battle.toJSON();
	return result;
}

function playerOptions(spec, name) {
	const options = {name};
	if (!spec) return options;
	if (spec.team !== undefined && spec.team !== null) options.team = spec.team;
	if (spec.seed !== undefined && spec.seed !== null) options.seed = spec.seed;
	return options;
}

// Uniform random legal choice for one side, from Showdown's own request (used by play_random only).
function randomChoice(request, prng) {
	if (!request || request.wait) return null;
	const pokemon = request.side.pokemon;
	const switches = [];
	for (let i = 1; i < pokemon.length; i++) {
		if (!pokemon[i].condition.endsWith(' fnt') && !pokemon[i].active) switches.push(`switch ${i + 1}`);
	}
	if (request.forceSwitch) return prng.sample(switches);
	const active = request.active[0];
	const moves = [];
	active.moves.forEach((move, i) => {
		if (!move.disabled) moves.push(`move ${i + 1}`);
	});
	const options = active.trapped ? moves : moves.concat(switches);
	return options.length ? prng.sample(options) : 'move 1';
}

const commands = {
	version() {
		return {showdown: SHOWDOWN_VERSION, node: process.version};
	},

	// draws: a list of [] (a raw 32-bit next()), [n] (random(n)) or [m, n] (random(m, n)).
	prng({seed, draws}) {
		const prng = new PRNG(seed);
		const values = draws.map(args => {
			if (args.length === 0) return prng.rng.next();
			return prng.random(...args);
		});
		return {values, seed: prng.getSeed()};
	},

	// trace: record every PRNG draw with the chain of functions that asked for it ("prngCalls" in
	// each snapshot): how the translation learns Showdown's order of random draws.
	start({battle: name, format, seed, p1, p2, strict = true, trace = false}) {
		if (battles.has(name)) throw new Error(`battle ${JSON.stringify(name)} already exists`);
		const entry = {battle: null, logPos: 0, prngCalls: trace ? [] : null};
		const prng = new PRNG(seed);
		if (trace) tracePrng(prng, entry.prngCalls);
		entry.battle = new Battle({
			formatid: format,
			prng,
			strictChoices: strict,
			p1: playerOptions(p1, 'p1'),
			p2: playerOptions(p2, 'p2'),
		});
		battles.set(name, entry);
		return snapshot(entry);
	},

	choose({battle: name, p1, p2, state = true, full = false}) {
		const entry = getBattle(name);
		if (entry.battle.ended) throw new Error(`battle ${JSON.stringify(name)} has ended`);
		entry.battle.makeChoices(p1 || '', p2 || '');
		return snapshot(entry, {state, full});
	},

	state({battle: name, full = false}) {
		return snapshot(getBattle(name), {full});
	},

	end({battle: name}) {
		const entry = getBattle(name);
		entry.battle.destroy();
		battles.delete(name);
		return {};
	},

	generate_team({format, seed}) {
		return {team: Teams.generate(format, {seed})};
	},

	// The in-process speed of Showdown itself: battles of uniform random legal choices, no IPC per
	// decision. A decision is one side's choice. With `teams` (a list of [p1 team, p2 team] pairs,
	// used in turn), the battles are between those teams; otherwise the format makes random teams.
	play_random({format, battles: count, seed, max_turns = 1000, teams = null}) {
		const choicePrng = new PRNG(seed);
		let decisions = 0;
		let turns = 0;
		const start = process.hrtime.bigint();
		for (let i = 0; i < count; i++) {
			const pair = teams ? teams[i % teams.length] : null;
			const battle = new Battle({
				formatid: format,
				seed: `gen5,${(i + 1).toString(16).padStart(16, '0')}`,
				p1: pair ? {name: 'p1', team: pair[0]} : {name: 'p1', seed: `gen5,${(2 * i + 1).toString(16).padStart(16, '0')}`},
				p2: pair ? {name: 'p2', team: pair[1]} : {name: 'p2', seed: `gen5,${(2 * i + 2).toString(16).padStart(16, '0')}`},
			});
			while (!battle.ended && battle.turn < max_turns) {
				const c1 = randomChoice(battle.sides[0].activeRequest, choicePrng);
				const c2 = randomChoice(battle.sides[1].activeRequest, choicePrng);
				decisions += (c1 ? 1 : 0) + (c2 ? 1 : 0);
				battle.makeChoices(c1 || '', c2 || '');
			}
			turns += battle.turn;
			battle.destroy();
		}
		const seconds = Number(process.hrtime.bigint() - start) / 1e9;
		return {battles: count, decisions, turns, seconds};
	},

	gen1_data() {
		return gen1Data();
	},

	// Pokemon built by Showdown's own constructor on a scratch Gen 1 side: stats, HP and PP.
	make_pokemon({sets}) {
		scratchPokemon();
		return sets.map(set => {
			const pokemon = new Pokemon(set, scratchBattle.sides[0]);
			return {
				species: pokemon.species.id,
				maxhp: pokemon.maxhp,
				storedStats: Object.fromEntries(STATS.map(s => [s, pokemon.storedStats[s]])),
				ivs: pokemon.set.ivs,
				moves: pokemon.moveSlots.map(slot => ({id: slot.id, pp: slot.pp, maxpp: slot.maxpp})),
			};
		});
	},

	// Gen 1 stat stage changes by Showdown's own battle.boost (the gen1 mod's boost and boostBy) on a
	// scratch Pokemon whose stored and modified stats and stages are set as given.
	gen1_boost({cases}) {
		const pokemon = scratchPokemon();
		return cases.map(({stored, modified, boosts, boost}) => {
			Object.assign(pokemon.storedStats, stored);
			Object.assign(pokemon.modifiedStats, modified);
			Object.assign(pokemon.boosts, {atk: 0, def: 0, spa: 0, spd: 0, spe: 0, accuracy: 0, evasion: 0}, boosts);
			pokemon.hp = pokemon.maxhp;
			const success = scratchBattle.boost({...boost}, pokemon, pokemon, Dex.forGen(1).moves.get('growl'));
			scratchBattle.log.length = 0;
			return {success: !!success, boosts: {...pokemon.boosts}, modified: {...pokemon.modifiedStats}};
		});
	},

	gen1_random_battle_data() {
		return gen1RandomBattleData();
	},

	// generate_team, also answering the generator's PRNG seed after the team (how many draws it made).
	generate_team_prng({format, seed}) {
		const generator = Teams.getGenerator(format, seed);
		const team = generator.getTeam({seed});
		return {team, seed: generator.prng.getSeed()};
	},
};

// Gen 1 data exactly as Showdown's gen1 mod sees it, for tools/gen_data.py.
function gen1Data() {
	const dex = Dex.forGen(1);
	const species = dex.species.all()
		.filter(s => s.num >= 1 && s.num <= 151 && !s.forme && s.gen === 1)
		.sort((a, b) => a.num - b.num)
		.map(s => ({
			id: s.id, num: s.num, name: s.name, types: s.types,
			baseStats: {hp: s.baseStats.hp, atk: s.baseStats.atk, def: s.baseStats.def,
				spa: s.baseStats.spa, spd: s.baseStats.spd, spe: s.baseStats.spe},
		}));
	const moves = dex.moves.all()
		.filter(m => m.num >= 1 && m.num <= 165 && !m.isNonstandard)
		.sort((a, b) => a.num - b.num)
		.map(m => ({
			id: m.id, num: m.num, name: m.name, type: m.type, category: m.category,
			basePower: m.basePower, accuracy: m.accuracy, pp: m.pp, priority: m.priority,
			target: m.target, critRatio: m.critRatio || 1, multihit: m.multihit || null,
			drain: m.drain || null, recoil: m.recoil || null, heal: m.heal || null,
			status: m.status || null, volatileStatus: m.volatileStatus || null,
			boosts: m.boosts || null, self: m.self ? {boosts: m.self.boosts || null, volatileStatus: m.self.volatileStatus || null} : null,
			secondary: m.secondary ? {chance: m.secondary.chance, status: m.secondary.status || null,
				volatileStatus: m.secondary.volatileStatus || null, boosts: m.secondary.boosts || null} : null,
			ohko: !!m.ohko, selfdestruct: m.selfdestruct || null, damage: m.damage === undefined ? null : m.damage,
			ignoreImmunity: m.ignoreImmunity === undefined ? null : m.ignoreImmunity,
			flags: Object.keys(m.flags).sort(),
		}));
	const types = dex.types.all().filter(t => !t.isNonstandard).map(t => t.name).sort();
	const typeChart = {};
	for (const attacking of types) {
		typeChart[attacking] = {};
		for (const defending of types) {
			// getEffectiveness is the exponent (-1, 0, 1); immunity is separate
			const immune = !dex.getImmunity(attacking, defending);
			typeChart[attacking][defending] = immune ? 0 : 2 ** dex.getEffectiveness(attacking, defending);
		}
	}
	return {showdown: SHOWDOWN_VERSION, species, moves, types, typeChart};
}

// The data gen1randombattle's team generator reads (data/random-battles/gen1/teams.ts), for
// envs/pokejax/jax/teams.py: the sets file it requires, in its key order (the species pool's order),
// and what the generator asks the gen1 dex about each move a set can hold.
function gen1RandomBattleData() {
	const sets = require('pokemon-showdown/dist/data/random-battles/gen1/data.json');
	const dex = Dex.forFormat(Dex.formats.get('gen1randombattle'));
	const moveIds = new Set();
	for (const entry of Object.values(sets)) {
		for (const field of ['moves', 'essentialMoves', 'exclusiveMoves', 'comboMoves']) {
			for (const id of entry[field] || []) moveIds.add(id);
		}
	}
	const moves = {};
	for (const id of moveIds) {
		const move = dex.moves.get(id);
		moves[id] = {num: move.num, category: move.category, damage: move.damage === undefined ? null : move.damage,
			damageCallback: !!move.damageCallback};
	}
	return {showdown: SHOWDOWN_VERSION, species: Object.keys(sets), sets, moves};
}

function respond(message) {
	process.stdout.write(JSON.stringify(message) + '\n');
}

const input = readline.createInterface({input: process.stdin, terminal: false});
input.on('line', line => {
	if (!line.trim()) return;
	let request;
	try {
		request = JSON.parse(line);
	} catch (err) {
		respond({id: null, ok: false, error: `request is not JSON: ${err.message}`});
		return;
	}
	const handler = commands[request.cmd];
	if (!handler) {
		respond({id: request.id, ok: false, error: `unknown command ${JSON.stringify(request.cmd)}`});
		return;
	}
	try {
		respond({id: request.id, ok: true, result: handler(request)});
	} catch (err) {
		respond({id: request.id, ok: false, error: String(err && err.message || err), stack: err && err.stack});
	}
});
// stdin closed: Node exits by itself once stdout is flushed (process.exit here would cut it short).
respond({id: 0, ok: true, result: {ready: true, showdown: SHOWDOWN_VERSION}});
