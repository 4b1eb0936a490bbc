import json, numpy as np, pyroomacoustics as pra
FS=16000
ROOMS={'small':[4.0,3.5,2.7],'medium':[6.0,4.5,3.0],'large':[9.0,7.0,3.5]}
FINISH={
 'office':dict(west='plasterboard',east='plasterboard',south='glass_window',north='plasterboard',floor='carpet_cotton',ceiling='ceiling_fissured_tile'),
 'studio':dict(west='plasterboard',east='facing_brick',south='curtains_fabric',north='plasterboard',floor='carpet_tufted_9.5mm',ceiling='ceiling_fissured_tile'),
 'classroom':dict(west='plasterboard',east='glass_window',south='plasterboard',north='wooden_lining',floor='linoleum_on_concrete',ceiling='ceiling_perforated_gypsum_board'),
 'chapel':dict(west='limestone_wall',east='limestone_wall',south='curtains_cotton_0.5',north='limestone_wall',floor='marble_floor',ceiling='wooden_lining'),
}
def mics_of(name, c):
    c2=np.array(c[:2])
    if name=='linear4_5cm': R=pra.linear_2D_array(c2,4,0.0,0.05)
    elif name=='linear8_4cm': R=pra.linear_2D_array(c2,8,0.0,0.04)
    elif name=='circular6_5cm': R=pra.circular_2D_array(c2,6,0.0,0.05)
    elif name=='circular8_10cm': R=pra.circular_2D_array(c2,8,0.0,0.10)
    return np.vstack([R, np.full(R.shape[1], c[2])])
def sweep(f1=50.,f2=7000.,T=1.0,fs=FS,fade=0.01):
    n=int(round(T*fs)); t=np.arange(n)/fs
    L=T/np.log(f2/f1)
    x=np.sin(2*np.pi*f1*L*(np.exp(t/L)-1))
    nf=int(round(fade*fs)); w=np.hanning(2*nf)
    x[:nf]*=w[:nf]; x[-nf:]*=w[nf:]
    return x
def simulate(p):
    dim=ROOMS[p['room_size']]
    c=[dim[0]/2,dim[1]/2,1.2]
    mats={k:pra.Material(v) for k,v in FINISH[p["finish"]].items()}
    room=pra.ShoeBox(dim,fs=FS,materials=mats,max_order=int(p['max_order']),air_absorption=True)
    az=np.deg2rad(p['source_azimuth']); d=p['source_distance']
    src=[c[0]+d*np.cos(az),c[1]+d*np.sin(az),1.2]
    x=sweep()
    room.add_source(src,signal=x)
    M=mics_of(p['microphone_array'],c)
    room.add_microphone_array(M)
    room.simulate()
    y=room.mic_array.signals
    N=2*FS
    if y.shape[1]<N: y=np.pad(y,((0,0),(0,N-y.shape[1])))
    y=y[:,:N]
    P=np.mean(y[0,:FS]**2)
    sig=np.sqrt(P/10**(p['snr_db']/10))
    noise=np.random.default_rng(int(p['seed'])).standard_normal(y.shape)*sig
    return y+noise, y, x, M, c, room
